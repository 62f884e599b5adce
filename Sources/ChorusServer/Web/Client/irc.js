// Chorus in a browser, 1 of 5: IRC over WebSocket (IRCv3 `websocket`, text.ircv3.net) to the server
// that served this page: the lines, the page's state, the socket, what the server says, history, and
// the lines the person typed until the server confirms them. Plain scripts, no build step, loaded in
// order (index.html) and sharing their names. The server does the work; these draw rooms,
// conversations, Chorus's events and views, and send the same lines a keyboard user would type.
'use strict';

const CAPS = ['message-tags', 'server-time', 'batch', 'echo-message', 'draft/chathistory', 'draft/read-marker', 'account-tag',
  'labeled-response', 'soju.im/webpush'];
const PAGE = 50;                 // history lines per request
const SAVED = 'chorus.login';    // localStorage: {account, token, tokenId}

const $ = (selector) => document.querySelector(selector);
const el = (tag, props = {}, ...children) => {
  const node = Object.assign(document.createElement(tag), props);
  for (const child of children) if (child != null) node.append(child);
  return node;
};

// ---- IRC lines ------------------------------------------------------------------------------

function unescapeTag(value) {
  return value.replace(/\\(.)?/g, (_, c) => ({ ':': ';', s: ' ', r: '\r', n: '\n', '\\': '\\' }[c] ?? (c || '')));
}

function parse(line) {
  const msg = { tags: {}, source: null, command: '', params: [] };
  let rest = line;
  if (rest.startsWith('@')) {
    const end = rest.indexOf(' ');
    for (const pair of rest.slice(1, end).split(';')) {
      const eq = pair.indexOf('=');
      if (eq < 0) msg.tags[pair] = '';
      else msg.tags[pair.slice(0, eq)] = unescapeTag(pair.slice(eq + 1));
    }
    rest = rest.slice(end + 1).trimStart();
  }
  if (rest.startsWith(':')) {
    const end = rest.indexOf(' ');
    msg.source = rest.slice(1, end);
    rest = rest.slice(end + 1).trimStart();
  }
  while (rest.length) {
    if (rest.startsWith(':')) { msg.params.push(rest.slice(1)); break; }
    const end = rest.indexOf(' ');
    if (end < 0) { msg.params.push(rest); break; }
    msg.params.push(rest.slice(0, end));
    rest = rest.slice(end + 1).trimStart();
  }
  msg.command = (msg.params.shift() || '').toUpperCase();
  msg.nick = msg.source ? msg.source.split('!')[0] : '';
  return msg;
}

const isRoom = (name) => /^[#&]/.test(name);
const fold = (name) => name.toLowerCase();

// ---- State ----------------------------------------------------------------------------------

const state = {
  bot: 'Chorus',
  socket: null,
  mode: 'login',           // 'login' | 'register' while connecting
  credentials: null,       // {account, secret, email}
  me: '',                  // our nick
  account: '',
  registered: false,
  conversations: new Map(), // fold(name) → conversation
  current: null,
  commands: [],
  jobs: new Map(),          // job id → {status, assignee, eventId}
  chores: new Map(),        // room|chore → {turn, eventId}: whose turn it is, as the latest event said
  batches: new Map(),       // batch id → {target, lines, kind, label}
  labels: new Map(),        // label → how its answer is handled: {conversation, entry, internal}
  nextLabel: 1,
  pending: [],              // lines typed and not yet confirmed by the server (kept across a cut)
  joining: null,            // the room asked for with /join or the drawer: opened once joined
  photoFor: null,           // where a photo being chosen goes: {conversation, command}
  restored: false,          // the device's last known state was read
  answerTo: null,           // while a labeled answer is read: the conversation its command came from
  retry: 0,
  retryTimer: null,
  stayOut: false,           // logged out: no reconnect
  wantsToken: false,
  vapid: null,              // the server's push key (ISUPPORT VAPID): notifications while the page is closed
};

function conversation(name, create = true) {
  const key = fold(name);
  let c = state.conversations.get(key);
  if (!c && create) {
    c = { name, key, lines: [], unread: 0, oldest: null, newest: null, complete: false, loading: false, joined: false, seen: new Set(),
      readAt: null };  // the account's read marker here (draft/read-marker), shared by its devices
    state.conversations.set(key, c);
  }
  return c;
}

const botConversation = () => conversation(state.bot);

// ---- The socket -----------------------------------------------------------------------------

const isOpen = () => state.socket && state.socket.readyState === WebSocket.OPEN;

function send(line) {
  if (isOpen()) state.socket.send(line);
}

/// Sends a line with a `label` (IRCv3 labeled-response): the server's whole answer to it comes back
/// as one batch with that label, so the page knows what answered what.
function sendLabeled(line, handling) {
  const label = `w${state.nextLabel++}`;
  state.labels.set(label, handling);
  send(`@label=${label} ${line}`);
}

function connect() {
  clearTimeout(state.retryTimer);
  setStatus('connecting…');
  const socket = new WebSocket(`wss://${location.host}/socket`, ['text.ircv3.net']);
  state.socket = socket;
  state.registered = false;
  socket.onopen = async () => {
    await settingsReady;
    if (state.socket !== socket || !state.credentials) return;
    const { account } = state.credentials;
    send('CAP LS 302');
    send(`NICK ${account}`);
    send(`USER ${account} 0 * :Chorus web`);
  };
  socket.onmessage = (event) => receive(parse(event.data));
  socket.onclose = () => {
    if (state.socket !== socket) return;
    state.socket = null;
    state.registered = false;
    // Requests that were on the way are lost with the connection: asked again after the next JOIN.
    // Lines typed and not confirmed stay pending: sent again once history shows they did not arrive.
    for (const c of state.conversations.values()) { c.joined = false; c.loading = false; }
    state.batches.clear();
    state.labels.clear();
    if (state.stayOut || !state.credentials) return;
    // Back off 1, 2, 4 … 30 seconds, with jitter, so a restarting server is not stampeded.
    const delay = Math.min(30, 2 ** state.retry) * (0.75 + Math.random() / 2);
    state.retry += 1;
    setStatus(`offline — retrying in ${Math.round(delay)} s`);
    state.retryTimer = setTimeout(connect, delay * 1000);
  };
}

function setStatus(text) { $('#status').textContent = text; }

// ---- What the server says -------------------------------------------------------------------

function receive(msg) {
  const batch = msg.tags.batch && state.batches.get(msg.tags.batch);
  if (batch && msg.command !== 'BATCH') { batch.lines.push(msg); return; }
  if (msg.tags.label && msg.command !== 'BATCH') return labeledAnswer(msg.tags.label, msg.command === 'ACK' ? [] : [msg]);
  dispatch(msg);
}

function dispatch(msg) {
  const handler = handlers[msg.command];
  if (handler) handler(msg);
}

/// The server's answer to a labeled line: the line it confirms leaves the pending ones, the page's
/// own requests (its token, the command list) are read and not shown, and Chorus's replies go to
/// the conversation the command was typed in.
function labeledAnswer(label, lines) {
  const handling = state.labels.get(label);
  state.labels.delete(label);
  if (!handling) { lines.forEach(dispatch); return; }
  if (handling.entry) confirmed(handling.entry);
  if (handling.internal) { handling.internal(lines); return; }
  state.answerTo = handling.conversation || null;
  try { lines.forEach(dispatch); } finally { state.answerTo = null; }
  if (handling.onAnswer) handling.onAnswer(lines);
}

const handlers = {
  PING: (m) => send(`PONG :${m.params[0] ?? ''}`),
  CAP: (m) => {
    const sub = m.params[1];
    if (sub === 'LS' && m.params[2] !== '*') {
      const offered = new Set((m.params.at(-1) || '').split(' ').map((c) => c.split('=')[0]));
      const wanted = CAPS.filter((c) => offered.has(c));
      if (state.mode === 'login' && offered.has('sasl')) wanted.push('sasl');
      send(`CAP REQ :${wanted.join(' ')}`);
    } else if (sub === 'ACK') {
      const acked = m.params.at(-1).split(' ');
      if (acked.includes('sasl')) send('AUTHENTICATE PLAIN');
      else if (state.mode === 'register') {
        const { account, secret, email } = state.credentials;
        send(`REGISTER ${account} ${email || '*'} ${secret}`);
      } else send('CAP END');
    } else if (sub === 'NAK') send('CAP END');
  },
  AUTHENTICATE: (m) => {
    if (m.params[0] !== '+') return;
    const { account, secret } = state.credentials;
    const bytes = new TextEncoder().encode(`\0${account}\0${secret}`);
    send(`AUTHENTICATE ${btoa(String.fromCharCode(...bytes))}`);
  },
  903: () => send('CAP END'),
  904: () => loginFailed('That account and password do not match.'),
  902: () => loginFailed('That account is not available.'),
  REGISTER: (m) => {
    if (m.params[0] === 'SUCCESS') { state.wantsToken = true; send('CAP END'); }
  },
  FAIL: (m) => {
    if (m.params[0] === 'REGISTER') loginFailed(m.params.at(-1));
    else if (m.params[0] === 'CHATHISTORY') historyRefused();
    else info(state.answerTo || current(), m.params.at(-1));
  },
  // The server closes the connection (shutting down, a timeout): the socket's close retries.
  ERROR: (m) => setStatus(m.params[0] || 'disconnected'),
  '001': (m) => {
    state.registered = true;
    state.retry = 0;
    state.me = m.params[0];
    state.account = state.credentials.account;
    state.mode = 'login';  // the account exists now: a reconnection logs in
    setStatus('');
    showApp();
    if (state.wantsToken) requestToken();
    askForCommands();
    renewPush();
    // Rooms the account is in are joined by the server; a private conversation catches up here
    // (and sends what was typed while offline), and those this page does not know yet (after a
    // reload, or from another device) are listed.
    for (const c of state.conversations.values()) {
      if (isRoom(c.name)) continue;
      if (c.key === fold(state.bot)) sendPending(c, null);
      else if (c.newest) loadHistory(c, 'after');
      else if (pendingFor(c).length) loadHistory(c, 'latest');
    }
    send(`CHATHISTORY TARGETS timestamp=${new Date(Date.now() + 60000).toISOString()} timestamp=1970-01-01T00:00:00.000Z 100`);
  },
  '005': (m) => {
    const vapid = m.params.find((p) => p.startsWith('VAPID='));
    if (vapid) state.vapid = vapid.slice(6);
  },
  // The rooms the account is in are joined right after the MOTD.
  376: () => setTimeout(dropRoomsNotJoined, 3000),
  422: () => setTimeout(dropRoomsNotJoined, 3000),
  433: (m) => {
    if (!state.registered) send(`NICK ${state.credentials.account}_${Math.floor(Math.random() * 1000)}`);
  },
  NICK: (m) => { if (fold(m.nick) === fold(state.me)) state.me = m.params[0]; },
  JOIN: (m) => {
    const room = conversation(m.params[0]);
    if (fold(m.nick) !== fold(state.me)) return;
    room.joined = true;
    room.restored = false;
    renderConversations();
    if (!state.current || state.joining === room.key) {
      state.joining = null;
      select(room);
      if (state.openingJob) { openJob(state.openingJob); state.openingJob = null; }  // a notification's job
    }
    loadHistory(room, room.newest ? 'after' : 'latest');
  },
  PART: (m) => { if (fold(m.nick) === fold(state.me)) leave(m.params[0]); },
  KICK: (m) => { if (fold(m.params[1]) === fold(state.me)) leave(m.params[0], `You were removed from ${m.params[0]}.`); },
  PRIVMSG: (m) => message(m),
  NOTICE: (m) => message(m),
  MARKREAD: (m) => {
    const c = conversation(m.params[0], isRoom(m.params[0]) || state.conversations.has(fold(m.params[0])));
    if (!c) return;
    const at = m.params[1] && m.params[1].startsWith('timestamp=') ? new Date(m.params[1].slice(10)) : null;
    if (at && c.readAt && at <= c.readAt) return;
    c.readAt = at;
    countUnread(c);
    renderConversations();
  },
  BATCH: (m) => {
    const [ref, kind, target] = [m.params[0].slice(1), m.params[1], m.params[2]];
    if (m.params[0].startsWith('+')) state.batches.set(ref, { kind, target, lines: [], label: m.tags.label });
    else {
      const batch = state.batches.get(ref);
      state.batches.delete(ref);
      if (!batch) return;
      if (batch.kind === 'labeled-response') labeledAnswer(batch.label, batch.lines);
      else batchEnded(batch);
    }
  },
};

function loginFailed(text) {
  if (state.registered) return;
  const saved = loadSaved();
  if (saved && state.credentials && state.credentials.secret === saved.token) {
    localStorage.removeItem(SAVED);
    text = 'Your saved login is no longer valid: log in again.';
  }
  state.credentials = null;
  state.stayOut = true;
  if (state.socket) state.socket.close();
  showLogin(text);
}

/// Where a line belongs: a room, or the private conversation with the other person.
function conversationOf(m) {
  const target = m.params[0];
  if (isRoom(target)) return conversation(target);
  if (fold(m.nick) === fold(state.bot) || !m.nick || m.nick.includes('.')) {
    // Chorus's events go to the room they are about; its answers to where the question was asked.
    const room = m.tags['+draft/channel-context'] || m.tags['chorus/room'];
    const known = room && state.conversations.has(fold(room));
    if (known && m.tags['chorus/event']) return conversation(room);
    if (state.answerTo) return state.answerTo;
    return known ? conversation(room) : botConversation();
  }
  return conversation(fold(m.nick) === fold(state.me) ? target : m.nick);
}

function message(m) {
  if (!state.registered && m.command === 'NOTICE') return;
  const c = conversationOf(m);
  const line = lineOf(m);
  if (!add(c, line)) return;
  if (c !== state.current && !line.self) c.unread += 1;
  renderConversations();
  if (c === state.current) { appendLine(line, true); markRead(c); }
  keepState();
  if (line.tags['chorus/job'] || line.tags['chorus/chore'] || line.tags['chorus/list'] || line.tags['chorus/request']) {
    jobChanged(line.tags['chorus/room'] || c.name);
  }
}

function lineOf(m) {
  return {
    id: m.tags.msgid || null,
    time: m.tags.time ? new Date(m.tags.time) : new Date(),
    nick: m.nick,
    command: m.command,
    text: m.params.at(-1) || '',
    tags: m.tags,
    self: fold(m.nick) === fold(state.me),
  };
}

/// Adds a line once (history and live lines may overlap); false if it was there.
function add(c, line, position = 'end') {
  if (line.id) {
    if (c.seen.has(line.id)) return false;
    c.seen.add(line.id);
  }
  if (position === 'start') c.lines.unshift(line); else c.lines.push(line);
  if (line.id && position === 'end') c.newest = line.id;
  if (line.id && (position === 'start' || !c.oldest)) c.oldest = line.id;
  noteEvent(line.tags);
  return true;
}

function removeLine(c, line) {
  const at = c.lines.indexOf(line);
  if (at >= 0) c.lines.splice(at, 1);
  if (line.node) line.node.remove();
}

function leave(name, why) {
  const c = conversation(name, false);
  if (!c) return;
  c.joined = false;
  if (why) info(c, why);
  state.conversations.delete(c.key);
  if (state.current === c) state.current = null;
  renderConversations();
  const next = [...state.conversations.values()].find((x) => isRoom(x.name));
  if (next) select(next); else renderLog();
}

// ---- History (CHATHISTORY) ------------------------------------------------------------------

function loadHistory(c, how) {
  if (c.loading) return;
  c.loading = true;
  if (how === 'latest') send(`CHATHISTORY LATEST ${c.name} * ${PAGE}`);
  else if (how === 'before') send(`CHATHISTORY BEFORE ${c.name} msgid=${c.oldest} ${PAGE}`);
  else send(`CHATHISTORY AFTER ${c.name} msgid=${c.newest} 100`);
  c.pending = how;
}

function batchEnded(batch) {
  if (batch.kind === 'draft/chathistory-targets') return privateConversationsListed(batch.lines);
  if (batch.kind !== 'chathistory' || !batch.target) return;
  const c = conversation(batch.target);
  const how = c.pending;
  c.loading = false;
  const lines = batch.lines.map(lineOf);
  if (how === 'before') {
    for (const line of lines.reverse()) add(c, line, 'start');
    if (lines.length < PAGE) c.complete = true;
  } else {
    let added = 0;
    for (const line of lines) if (add(c, line)) added += 1;
    if (how === 'latest' && lines.length < PAGE) c.complete = true;
    if (how === 'after' && c !== state.current) c.unread += added;
    // Lines said while the history was on its way came first: each goes back to its time.
    if (added) inTimeOrder(c);
    sendPending(c, lines);
  }
  countUnread(c);
  if (c === state.current) markRead(c);
  renderConversations();
  if (c === state.current) renderLog(how !== 'before');
}

/// A history request refused (a kept line the server no longer has): each conversation that was
/// catching up reads its latest lines instead.
function historyRefused() {
  for (const c of state.conversations.values()) {
    if (c.loading && c.pending === 'after') { c.loading = false; loadHistory(c, 'latest'); }
  }
}

function inTimeOrder(c) {
  c.lines.sort((a, b) => a.time - b.time);  // stable: lines of one millisecond keep their order
  const stored = c.lines.filter((line) => line.id);
  if (stored.length) { c.oldest = stored[0].id; c.newest = stored.at(-1).id; }
}

/// `CHATHISTORY TARGETS <nick> <time>` lines: the private conversations this page does not show
/// yet get their latest lines (rooms come with their JOIN).
function privateConversationsListed(lines) {
  for (const m of lines) {
    const name = m.params[1];
    if (m.command !== 'CHATHISTORY' || !name || isRoom(name) || state.conversations.has(fold(name))) continue;
    loadHistory(conversation(name), 'latest');
  }
  renderConversations();
}

// ---- Lines typed: pending until the server confirms them ------------------------------------

const pendingFor = (c) => state.pending.filter((entry) => fold(entry.target) === c.key);

/// A line the person typed: shown at once as "sending", sent when the conversation can take it,
/// and kept (across a cut network or a server restart) until the server's answer confirms it.
function post(c, text, onAnswer = null) {
  const line = { id: null, time: new Date(), nick: state.me || state.account, command: 'PRIVMSG', text, tags: {}, self: true, pending: 'sending' };
  const entry = { target: c.name, text, sentAt: null, line, onAnswer };
  state.pending.push(entry);
  c.lines.push(line);
  if (c === state.current) appendLine(line, true);
  if (canSendTo(c)) transmit(entry);
  keepState();
}

const canSendTo = (c) => state.registered && isOpen() && (!isRoom(c.name) || c.joined);

function transmit(entry) {
  entry.sentAt = new Date();
  entry.line.pending = 'sending';
  sendLabeled(`PRIVMSG ${entry.target} :${entry.text}`, { conversation: conversation(entry.target), entry, onAnswer: entry.onAnswer });
}

function confirmed(entry) {
  state.pending = state.pending.filter((e) => e !== entry);
  removeLine(conversation(entry.target), entry.line);
  keepState();
}

/// After a reconnection: a line sent before the cut that history shows arrived is confirmed; the
/// others are sent now. Chorus keeps no history of private commands, so one sent to it whose answer
/// was lost is not sent twice on a guess: the person is asked.
function sendPending(c, history) {
  if (!canSendTo(c)) return;
  const arrived = (history || []).filter((line) => line.self);
  for (const entry of pendingFor(c)) {
    const found = arrived.findIndex((line) => line.text === entry.text);
    if (found >= 0) { arrived.splice(found, 1); confirmed(entry); continue; }
    if (entry.sentAt && !history) { entry.line.pending = 'unsure'; redraw(c, entry.line); continue; }
    transmit(entry);
  }
}

function redraw(c, line) {
  if (line.node && c === state.current) line.node.replaceWith(lineNode(line));
}
