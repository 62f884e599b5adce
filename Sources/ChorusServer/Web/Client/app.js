// Chorus in a browser: IRC over WebSocket (IRCv3 `websocket`, text.ircv3.net) to the server that
// served this page. Plain script, no build step. The server does the work; this draws rooms,
// conversations and Chorus's events, and sends the same lines a keyboard user would type.
'use strict';

const CAPS = ['message-tags', 'server-time', 'batch', 'echo-message', 'draft/chathistory', 'draft/read-marker', 'account-tag',
  'labeled-response'];
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
    if (!state.current || state.joining === room.key) { state.joining = null; select(room); }
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

// ---- Chorus: token, commands, cards ---------------------------------------------------------

/// A command of the page's own (its token, the command list): its answer is read, not shown.
function askBot(text, read) {
  sendLabeled(`PRIVMSG ${state.bot} :${text}`, { internal: (lines) => read(lines.filter((m) => fold(m.nick) === fold(state.bot))) });
}

function askForCommands() {
  askBot('!help', (lines) => {
    // A long answer comes in several lines, each continuing the one before.
    const text = lines.map((m) => m.params.at(-1) || '').join(' ');
    const found = /Commands you can use[^:]*: (.*?)(?:!help <command>|$)/.exec(text);
    if (found) state.commands = [...new Set(found[1].split(' ').filter((c) => c.startsWith('!')))];
  });
}

function requestToken() {
  state.wantsToken = false;
  const device = /Mobi/.test(navigator.userAgent) ? 'phone' : 'browser';
  askBot(`!token new web ${device}`, (lines) => {
    for (const m of lines) {
      const found = /^Token (\d+) \(.*\): (chorus-[0-9a-f]{64})$/.exec(m.params.at(-1) || '');
      if (!found) continue;
      localStorage.setItem(SAVED, JSON.stringify({ account: state.account, token: found[2], tokenId: found[1] }));
      state.credentials = { account: state.account, secret: found[2] };
      return;
    }
    // No token (the account has as many as it may): say so, rather than forget the login later.
    const c = botConversation();
    for (const m of lines) add(c, lineOf(m));
    info(c, 'This device could not keep you logged in: you will be asked for your password next time. !token lists your tokens; !token revoke <id> ends one you no longer use.');
    renderConversations();
  });
}

/// What the latest event says of a job or a chore; an older one (history paged back) changes nothing.
function noteEvent(tags) {
  const eventId = Number(tags['chorus/event-id'] || 0);
  const newer = (known) => !known || eventId >= known.eventId;
  const job = tags['chorus/job'];
  if (job) {
    const known = state.jobs.get(job);
    if (newer(known)) {
      state.jobs.set(job, {
        status: tags['chorus/status'] || tags['chorus/to'] || known?.status || 'created',
        assignee: tags['chorus/assignee'] ?? known?.assignee,
        eventId,
      });
      refreshCards('job', job);
    }
  }
  const chore = tags['chorus/chore'] && choreKey(tags);
  if (chore && (tags['chorus/event'] || '').startsWith('turn.') && !tags['chorus/event'].startsWith('turn.swap.')) {
    if (newer(state.chores.get(chore))) {
      state.chores.set(chore, { turn: tags['chorus/event'] === 'turn.done' ? null : tags['chorus/turn'] || null, eventId });
      refreshCards('chore', chore);
    }
  }
}

const choreKey = (tags) => `${fold(tags['chorus/room'] || '')}|${fold(tags['chorus/chore'])}`;

/// A job or chore changed: the buttons of its earlier cards follow (no Start on a job that is done,
/// no Done on a turn that has passed).
function refreshCards(kind, key) {
  for (const node of document.querySelectorAll(`#log .card[data-${kind}="${CSS.escape(key)}"]`)) {
    const fresh = card(node.line);
    node.line.node = fresh;
    node.replaceWith(fresh);
  }
}

/// The next steps the viewer may take on an event, as the commands they would type.
function actionsFor(line) {
  const t = line.tags;
  const me = fold(state.account || state.me);
  const event = t['chorus/event'] || '';
  const actions = [];
  if (t['chorus/job'] && event.startsWith('job.')) {
    const job = state.jobs.get(t['chorus/job']) || {};
    if (job.assignee && fold(job.assignee) === me) {
      if (job.status === 'created' || job.status === 'assigned') actions.push(['Start', `!start ${t['chorus/job']}`]);
      if (['created', 'assigned', 'in-progress'].includes(job.status)) {
        actions.push(['Done', `!done ${t['chorus/job']}`]);
        actions.push(['Photo', `!photo ${t['chorus/job']}`]);
      }
    }
  } else if (t['chorus/chore'] && /^turn\.(started|due|overdue|swapped)$/.test(event)) {
    // Only the chore's latest turn, and only while it is still the viewer's.
    const chore = state.chores.get(choreKey(t));
    if (chore && chore.turn && fold(chore.turn) === me && chore.eventId === Number(t['chorus/event-id'] || 0)) {
      actions.push(['Done', `!done ${t['chorus/chore']}`]);
    }
  } else if (event === 'request.offered' && fold(t['chorus/customer'] || '') === me && t['chorus/contractor']) {
    actions.push([`Hire ${t['chorus/contractor']}`, `!hire ${t['chorus/request']} ${t['chorus/contractor']}`]);
  }
  return actions;
}

const EVENT_KINDS = { job: 'Job', task: 'Job', ask: 'Request to a manager', turn: 'Chore', chore: 'Chore', request: 'Service request',
  time: 'Time', list: 'List', member: 'Room', room: 'Room' };

/// What happened, in words: a card never shows the event's internal name.
const EVENT_WORDS = {
  'job.created': 'new', 'job.assigned': 'assigned', 'job.unassigned': 'unassigned', 'job.status': 'status changed',
  'job.edited': 'edited', 'job.comment': 'comment', 'job.photo': 'photo', 'task.added': 'task added', 'task.done': 'task ticked',
  'ask.opened': 'asked', 'ask.decided': 'answered', 'turn.started': 'whose turn', 'turn.done': 'done', 'turn.skipped': 'skipped',
  'turn.due': 'due now', 'turn.overdue': 'overdue', 'turn.swap.asked': 'swap asked', 'turn.swapped': 'swapped',
  'turn.swap.declined': 'swap declined', 'chore.added': 'new', 'chore.removed': 'removed', 'chore.order': 'new order',
  'chore.edited': 'changed', 'chore.left': 'rotation changed', 'request.posted': 'new', 'request.edited': 'changed',
  'request.cancelled': 'cancelled', 'request.offered': 'offer', 'request.hired': 'hired', 'request.done': 'finished',
  'request.confirmed': 'confirmed', 'request.disputed': 'disputed', 'request.reviewed': 'review', 'request.expired': 'expired',
  'request.message': 'message', 'list.item.added': 'added', 'list.item.done': 'ticked', 'list.item.removed': 'removed',
  'member.added': 'new member', 'member.role': 'role changed', 'member.away': 'away', 'member.back': 'back',
  'room.settings': 'settings', 'time.logged': 'logged', 'time.nudge': 'timer still running', 'time.planned': 'planned',
};

function eventWords(event) {
  return EVENT_WORDS[event] || event.split('.').slice(1).join(' ');
}

function card(line) {
  const event = line.tags['chorus/event'];
  const kind = EVENT_KINDS[event.split('.')[0]] || 'Chorus';
  const number = line.tags['chorus/job'] ? ` ${line.tags['chorus/job']}` : line.tags['chorus/request'] ? ` ${line.tags['chorus/request']}` : '';
  const node = el('div', { className: 'card' }, el('span', { className: 'kind', textContent: `${kind}${number} · ${eventWords(event)}` }), rich(line.text));
  node.dataset.event = event;
  node.line = line;
  if (line.tags['chorus/job']) {
    node.dataset.job = line.tags['chorus/job'];
    // A job's card opens its page, in the room it belongs to.
    const room = line.tags['chorus/room'] && state.conversations.get(fold(line.tags['chorus/room']));
    if (room) {
      const open = el('button', { type: 'button', className: 'link open-job', textContent: 'Open' });
      open.onclick = () => { if (state.current !== room) select(room); openJob(Number(line.tags['chorus/job'])); };
      node.firstChild.append(' ', open);
    }
  }
  if (line.tags['chorus/chore']) node.dataset.chore = choreKey(line.tags);
  const buttons = el('div', { className: 'buttons' });
  for (const [label, command] of actionsFor(line)) {
    const button = el('button', { type: 'button', textContent: label });
    button.dataset.command = command;
    button.onclick = label === 'Photo' ? () => pickPhoto(command) : () => { button.disabled = true; post(current(), command); };
    buttons.append(button);
  }
  if (buttons.childElementCount) node.append(buttons);
  return node;
}

/// Text with its links made links; a report's picture shown as the picture.
function rich(text) {
  const span = el('span', { className: 'text' });
  const pattern = /https?:\/\/[^\s<>"]+/g;
  let at = 0;
  for (const found of text.matchAll(pattern)) {
    span.append(text.slice(at, found.index));
    at = found.index + found[0].length;
    let url = found[0];
    let label = url;
    try {
      // The server's own report links open here, whatever name the server gave itself.
      const parsed = new URL(url);
      if (parsed.pathname.startsWith('/report.')) {
        url = location.origin + parsed.pathname + parsed.search;
        label = parsed.pathname === '/report.csv' ? 'CSV' : 'Chart';
      }
      if (parsed.pathname.startsWith('/photo/') && parsed.origin !== location.origin) {
        url = location.origin + parsed.pathname + parsed.search;
      }
      if (parsed.pathname.startsWith('/photo/')) {
        span.append(el('img', { className: 'photo', src: url, alt: 'Photo', loading: 'lazy' }));
        label = 'Photo';
      }
      if (parsed.pathname === '/report.svg') {
        // At its own size, scrolled sideways on a narrow screen: shrunk to a phone it cannot be read.
        span.append(el('div', { className: 'chart' }, el('img', { className: 'report', src: url, alt: 'Report chart', loading: 'lazy' })));
      }
    } catch { /* not a URL after all */ }
    span.append(el('a', { href: url, textContent: label, target: '_blank', rel: 'noreferrer' }));
  }
  span.append(text.slice(at));
  if (/[\u2580-\u259f]/.test(text) || /^ {2}\S.* {2,}/.test(text)) {
    return el('pre', {}, span);  // bars and tables keep their columns
  }
  return span;
}

// ---- Drawing --------------------------------------------------------------------------------

const timeFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const dateTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'full', timeStyle: 'short' });
const dayFormat = new Intl.DateTimeFormat(undefined, { weekday: 'long', day: 'numeric', month: 'long' });
const dayYearFormat = new Intl.DateTimeFormat(undefined, { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric' });

const dayOf = (date) => new Date(date.getFullYear(), date.getMonth(), date.getDate()).getTime();

/// "Today", "Yesterday", or the date: the separator above a day's first line.
function dayName(date) {
  const today = dayOf(new Date());
  const day = dayOf(date);
  if (day === today) return 'Today';
  if (day === dayOf(new Date(today - 12 * 3600 * 1000))) return 'Yesterday';
  return (date.getFullYear() === new Date().getFullYear() ? dayFormat : dayYearFormat).format(date);
}

function timeNode(line) {
  return el('time', { textContent: timeFormat.format(line.time), dateTime: line.time.toISOString(), title: dateTimeFormat.format(line.time) });
}

function lineNode(line) {
  let node;
  if (line.tags['chorus/event']) node = el('div', { className: 'line' }, timeNode(line), card(line));
  else {
    const classes = ['line', line.command === 'NOTICE' ? 'notice' : '', line.self ? 'self' : '', line.info ? 'info' : '',
      line.pending ? 'pending' : ''].filter(Boolean);
    const action = /^\x01ACTION (.*)\x01?$/.exec(line.text);
    const body = el('div', {}, line.nick ? el('span', { className: 'nick', textContent: action ? `* ${line.nick}` : line.nick }) : null,
      rich(action ? action[1].replace(/\x01$/, '') : line.text), line.pending ? pendingNote(line) : null);
    node = el('div', { className: classes.join(' ') }, timeNode(line), body);
  }
  if (line.id) node.dataset.id = line.id;
  line.node = node;
  return node;
}

function pendingNote(line) {
  if (line.pending !== 'unsure') return el('span', { className: 'state', textContent: isOpen() ? ' · sending…' : ' · waiting for the connection' });
  const again = el('button', { type: 'button', className: 'link', textContent: 'Send again' });
  again.onclick = () => {
    const entry = state.pending.find((e) => e.line === line);
    if (entry && canSendTo(conversation(entry.target))) { transmit(entry); redraw(conversation(entry.target), line); }
  };
  return el('span', { className: 'state' }, ' · the connection was cut before Chorus answered: ', again);
}

function dayNode(date) {
  const node = el('div', { className: 'day', role: 'separator', textContent: dayName(date) });
  node.dataset.day = String(dayOf(date));
  return node;
}

function current() { return state.current || botConversation(); }

function info(c, text) {
  const line = { id: null, time: new Date(), nick: '', command: 'NOTICE', text, tags: {}, self: false, info: true };
  c.lines.push(line);
  if (c === state.current) appendLine(line, true);
  return line;
}

function appendLine(line, scroll) {
  const log = $('#log');
  if (!state.current) return;
  const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
  const days = log.querySelectorAll('.day');
  if (!days.length || days[days.length - 1].dataset.day !== String(dayOf(line.time))) log.append(dayNode(line.time));
  log.append(lineNode(line));
  if (scroll && (atBottom || line.self)) log.scrollTop = log.scrollHeight;
}

function renderLog(toBottom = true) {
  const log = $('#log');
  const c = state.current;
  const before = log.scrollHeight - log.scrollTop;
  log.replaceChildren();
  if (!c) {
    // Once logged in: the rooms the account is in are joined right after, and open instead.
    if (state.registered) log.append(firstSteps());
    return;
  }
  if (!c.complete && c.oldest) log.append(el('div', { className: 'older', textContent: 'Scroll up for earlier lines' }));
  let day = null;
  for (const line of c.lines) {
    if (dayOf(line.time) !== day) { day = dayOf(line.time); log.append(dayNode(line.time)); }
    log.append(lineNode(line));
  }
  log.scrollTop = toBottom ? log.scrollHeight : log.scrollHeight - before;
}

/// What a person sees before they are in any room: what to do first.
function firstSteps() {
  const name = el('input', { id: 'first-room', placeholder: '#kitchen', autocapitalize: 'none', spellcheck: false });
  name.setAttribute('aria-label', 'Room to join or make');
  const form = el('form', { className: 'join' }, name, el('button', { type: 'submit', textContent: 'Join' }));
  form.onsubmit = (event) => { event.preventDefault(); joinRoom(name.value); };
  const help = el('button', { type: 'button', className: 'secondary', textContent: 'Ask Chorus what it can do' });
  help.onclick = () => { select(botConversation()); post(botConversation(), '!help'); };
  return el('section', { className: 'first-steps' },
    el('h2', { textContent: `Welcome${state.account ? ', ' + state.account : ''}` }),
    el('p', { textContent: 'Each team, household or group is a room: its jobs, chores, requests and time are kept there. Join one by its name, or make it: a new name makes a room that is yours.' }),
    form,
    el('p', { textContent: 'Chorus answers commands that start with !, in a room or in private.' }),
    help);
}

function renderConversations() {
  const rooms = $('#rooms'), people = $('#people');
  rooms.replaceChildren();
  people.replaceChildren();
  let unread = 0;
  for (const c of state.conversations.values()) {
    unread += c.unread;
    const button = el('button', { type: 'button' }, el('span', { textContent: c.name }),
      c.unread ? el('span', { className: 'badge', textContent: String(c.unread) }) : null);
    button.onclick = () => select(c);
    const item = el('li', { className: c === state.current ? 'current' : '' }, button);
    item.dataset.name = c.name;
    if (c === state.current) button.setAttribute('aria-current', 'true');
    if (c.key === fold(state.bot)) people.prepend(item);  // Chorus stays first
    else (isRoom(c.name) ? rooms : people).append(item);
  }
  const badge = $('#menu-unread');
  badge.hidden = unread === 0;
  badge.textContent = String(unread);
}

/// Lines from others after the read marker (when the server keeps one) are unread.
function countUnread(c) {
  if (c === state.current) { c.unread = 0; return; }
  if (!c.readAt) return;
  c.unread = c.lines.filter((line) => !line.self && !line.info && line.time > c.readAt).length;
}

/// The conversation is on screen: its newest line is read, on every device of the account.
function markRead(c) {
  const last = [...c.lines].reverse().find((line) => line.tags.time);
  if (!last || document.visibilityState !== 'visible') return;
  const at = new Date(last.tags.time);
  if (c.readAt && at <= c.readAt) return;
  c.readAt = at;
  send(`MARKREAD ${c.name} timestamp=${last.tags.time}`);
}

function select(c) {
  state.current = c;
  c.unread = 0;
  $('#title').textContent = c.name;
  setDrawer(false);
  views.job = null;
  views.request = null;
  views.form = false;
  views.status = '';
  showView('chat');
  renderConversations();
  renderLog();
  if (!c.lines.length && !c.loading && isRoom(c.name) && c.joined) loadHistory(c, 'latest');
  if (!c.lines.length && !c.loading && !isRoom(c.name) && c.key !== fold(state.bot)) loadHistory(c, 'latest');
  markRead(c);
}

// The drawer of conversations on a narrow screen: out of the Tab order and of screen readers while
// it is closed.
const narrow = window.matchMedia('(max-width: 700px)');

function setDrawer(open) {
  $('#app').classList.toggle('drawer', open);
  $('#menu').setAttribute('aria-expanded', String(open));
  $('#sidebar').inert = narrow.matches && !open;
  if (open) $('#sidebar button, #sidebar input')?.focus();
}

// ---- The last known state, kept on the device ----------------------------------------------
// Each conversation's last lines stay on the device: the app opens with them offline (its files
// come from the service worker), a reload asks the server only for what is newer, and Chorus's
// private conversation, of which the server keeps no history, survives.

const KEPT_LINES = 60;
const keptKey = () => `chorus.state.${fold(state.account)}`;
let keepTimer = null;

function keepState() {
  clearTimeout(keepTimer);
  keepTimer = setTimeout(() => {
    const conversations = [...state.conversations.values()].slice(0, 40).map((c) => ({
      name: c.name,
      lines: c.lines.filter((line) => !line.pending && !line.info).slice(-KEPT_LINES)
        .map(({ id, time, nick, command, text, tags, self }) => ({ id, time, nick, command, text, tags, self })),
    }));
    // Lines typed and not yet confirmed are kept too: a reload or a closed tab loses none of them.
    const pending = state.pending.map(({ target, text, sentAt, line }) => ({ target, text, sentAt, time: line.time }));
    try { localStorage.setItem(keptKey(), JSON.stringify({ conversations, pending })); } catch { /* storage full: the server has the rest */ }
  }, 500);
}

function restoreState() {
  if (state.restored) return;  // once a page load: later logins follow the server
  state.restored = true;
  let kept;
  try { kept = JSON.parse(localStorage.getItem(keptKey())); } catch { return; }
  for (const saved of kept?.conversations || []) {
    const c = conversation(saved.name);
    if (c.lines.length) continue;
    for (const line of saved.lines) add(c, { ...line, time: new Date(line.time) });
    // A room is the account's again only when the server joins it to it (dropped after login if not).
    c.restored = isRoom(c.name);
  }
  for (const saved of kept?.pending || []) {
    const c = conversation(saved.target);
    const line = { id: null, time: new Date(saved.time), nick: state.account, command: 'PRIVMSG', text: saved.text, tags: {}, self: true, pending: 'sending' };
    state.pending.push({ target: c.name, text: saved.text, sentAt: saved.sentAt ? new Date(saved.sentAt) : null, line, onAnswer: null });
    c.lines.push(line);
  }
}

/// After login, the kept rooms the server did not join the account to (left on another device).
function dropRoomsNotJoined() {
  for (const c of [...state.conversations.values()]) if (c.restored && !c.joined) leave(c.name);
}

// ---- What the person types ------------------------------------------------------------------

function say(text) {
  if (text.startsWith('/')) return slashCommand(text.slice(1));
  post(current(), text);
}

function joinRoom(name) {
  const room = name.trim().split(' ')[0];
  if (!room) return;
  const target = room.startsWith('#') ? room : `#${room}`;
  const known = state.conversations.get(fold(target));
  if (known && known.joined) return select(known);
  state.joining = fold(target);
  send(`JOIN ${target}`);
}

function slashCommand(text) {
  const [verb, ...rest] = text.split(' ');
  const args = rest.join(' ');
  switch (verb.toLowerCase()) {
    case 'join': return joinRoom(args);
    case 'part': case 'leave': return send(`PART ${args || current().name}`);
    case 'msg': case 'query': {
      const [nick, ...words] = rest;
      if (!nick) return;
      const c = conversation(nick);
      renderConversations();
      select(c);
      if (words.length) post(c, words.join(' '));
      return;
    }
    case 'me': return post(current(), `\x01ACTION ${args}\x01`);
    case 'quote': case 'raw': return send(args);
    default: return send(text);  // /away, /whois … as the server knows them
  }
}

function suggest() {
  const value = $('#line').value;
  const box = $('#suggestions');
  const word = /^!(\S*)$/.exec(value);
  const matches = word ? state.commands.filter((c) => c.startsWith(`!${word[1]}`)).slice(0, 12) : [];
  box.hidden = matches.length === 0 || (matches.length === 1 && matches[0] === value);
  box.replaceChildren(...matches.map((command) => {
    const button = el('button', { type: 'button', textContent: command });
    button.onclick = () => { $('#line').value = `${command} `; $('#line').focus(); suggest(); };
    return button;
  }));
}

// ---- The Jobs view: a room's jobs as the API reads them (never the chat's English); every change
// is the !command a keyboard user would type, sent to the room, so the rules live in one place.

const JOB_FILTERS = [['Open', { status: 'open' }], ['Mine', { status: 'open', assignee: 'me' }], ['Done', { status: 'completed' }], ['All', {}]];
const views = { view: 'chat', filter: 'Open', job: null, form: false, refresh: null, status: '', request: null, scope: 'mine' };

async function api(path) {
  const saved = loadSaved();
  if (!saved || !saved.token) throw new Error('This view needs the device to stay logged in: log out and in again.');
  const answer = await fetch(path, { headers: { Authorization: `Bearer ${saved.token}` } });
  const json = await answer.json().catch(() => ({}));
  if (!answer.ok) throw new Error(json.message || `The server answered ${answer.status}.`);
  return json;
}

/// Chat or Jobs, for the room on screen (a private conversation has its chat only).
function showView(view) {
  // A room's views, Chorus's own (the person's time and what is theirs to do), or the chat alone.
  const kind = !state.current ? null : isRoom(state.current.name) ? 'room' : state.current.key === fold(state.bot) ? 'me' : null;
  const tabs = [...document.querySelectorAll('#views button')];
  views.view = tabs.some((tab) => tab.dataset.view === view && tab.dataset.for.split(' ').includes(kind)) ? view : 'chat';
  $('#views').hidden = !kind;
  for (const tab of tabs) {
    tab.hidden = !tab.dataset.for.split(' ').includes(kind);
    tab.setAttribute('aria-selected', String(tab.dataset.view === views.view));
  }
  $('.chat').classList.toggle('viewing', views.view !== 'chat');
  $('#room-view').hidden = views.view === 'chat';
  $('#room-view').setAttribute('aria-labelledby', `tab-${views.view}`);
  if (views.view !== 'chat') renderJobs();
}

function openJob(id) {
  views.job = id;
  views.form = false;
  showView('jobs');
}

/// A change of a job in the room on screen: the view reads it again, once for a burst of events.
function jobChanged(room) {
  if (views.view === 'chat' || views.form || !state.current) return;
  // A room's views follow that room's events; Chorus's own views follow whatever concerns the person.
  if (isRoom(state.current.name) ? fold(room || '') !== state.current.key : state.current.key !== fold(state.bot)) return;
  clearTimeout(views.refresh);
  views.refresh = setTimeout(renderJobs, 150);
}

/// Sends a command from a view, and says there what Chorus answered (a refusal, most often).
function act(text) {
  views.status = '';
  post(state.current, text, (lines) => {
    const said = lines.filter((m) => fold(m.nick) === fold(state.bot) && !m.tags['chorus/event']).map((m) => m.params.at(-1));
    views.status = said.join(' ');
    renderJobs();
  });
}

async function renderJobs() {
  const pane = $('#room-view');
  const c = state.current;
  if (!c || views.view === 'chat') return;
  try {
    const view = views.view;
    const nodes = view === 'chores' ? await choresPage(c) : view === 'time' ? await timePage() : view === 'me' ? await mePage() : view === 'requests' ? await requestsPage() : views.form ? [jobForm()] : views.job ? await jobPage(c, views.job) : await jobList(c);
    if (state.current !== c || views.view !== view) return;
    const status = el('p', { className: 'view-status', role: 'status', textContent: views.status, hidden: !views.status });
    // What is being typed on the page survives its being drawn again for a teammate's change.
    const typed = [...pane.querySelectorAll('form input:not([type=checkbox])')].map((input) => [input.closest('form').className, input.value]);
    const focused = pane.contains(document.activeElement) ? document.activeElement.closest('form')?.className : null;
    pane.replaceChildren(status, ...nodes);
    for (const [form, value] of typed) {
      const input = pane.querySelector(`form.${CSS.escape(form.split(' ')[0])} input`);
      if (input && !input.value) input.value = value;
    }
    if (focused) pane.querySelector(`form.${CSS.escape(focused.split(' ')[0])} input`)?.focus();
  } catch (error) {
    pane.replaceChildren(el('p', { className: 'view-status error', role: 'alert', textContent: error.message }));
  }
}

async function jobList(c) {
  const filter = Object.fromEntries(JOB_FILTERS)[views.filter];
  const query = new URLSearchParams({ room: c.name, limit: '100' });
  if (filter.status) query.set('status', filter.status);
  if (filter.assignee) query.set('assignee', state.account);
  const { jobs, total } = await api(`/api/v1/jobs?${query}`);
  const chips = el('div', { className: 'chips', role: 'group', ariaLabel: 'Which jobs' });
  for (const [name] of JOB_FILTERS) {
    const chip = el('button', { type: 'button', textContent: name });
    chip.setAttribute('aria-pressed', String(name === views.filter));
    chip.onclick = () => { views.filter = name; renderJobs(); };
    chips.append(chip);
  }
  const create = el('button', { type: 'button', className: 'new', textContent: 'New job' });
  create.onclick = () => { views.form = true; renderJobs(); };
  chips.append(create);
  const list = el('ul', { className: 'jobs-list' });
  for (const job of jobs) {
    const open = el('button', { type: 'button' },
      el('span', {}, el('span', { className: 'status-badge', textContent: job.status }), `${job.id} · ${job.title}`),
      el('span', { className: 'meta', textContent: jobFacts(job) }));
    open.dataset.job = String(job.id);
    open.onclick = () => openJob(job.id);
    list.append(el('li', {}, open));
  }
  const empty = jobs.length ? null : el('p', { className: 'view-status', textContent: `No ${views.filter === 'All' ? '' : views.filter.toLowerCase() + ' '}jobs in ${c.name} yet. New job makes one.` });
  const more = total > jobs.length ? el('p', { className: 'view-status', textContent: `The ${jobs.length} newest of ${total}.` }) : null;
  return [chips, list, empty, more].filter(Boolean);
}

const dueFormat = new Intl.DateTimeFormat(undefined, { weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' });
const dueYearFormat = new Intl.DateTimeFormat(undefined, { weekday: 'short', day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit' });
const when = (iso) => { const d = new Date(iso); return (d.getFullYear() === new Date().getFullYear() ? dueFormat : dueYearFormat).format(d); };

function jobFacts(job) {
  const done = job.tasks.filter((t) => t.done).length;
  return [job.assignee ? `→ ${job.assignee}` : 'nobody yet', job.due ? `due ${when(job.due)}` : null,
    job.tasks.length ? `${done}/${job.tasks.length} tasks` : null].filter(Boolean).join(' · ');
}

async function jobPage(c, id) {
  const { job, comments, activity } = await api(`/api/v1/jobs/${id}`);
  const back = el('button', { type: 'button', className: 'link', textContent: '‹ All jobs' });
  back.onclick = () => { views.job = null; renderJobs(); };
  const mine = job.assignee && fold(job.assignee) === fold(state.account);
  const isOpen = ['created', 'assigned', 'in-progress'].includes(job.status);
  const buttons = el('div', { className: 'buttons' });
  const button = (label, command, run = () => act(command)) => {
    const b = el('button', { type: 'button', textContent: label });
    b.dataset.command = command;
    b.onclick = run;
    buttons.append(b);
  };
  if (mine && (job.status === 'created' || job.status === 'assigned')) button('Start', `!start ${id}`);
  if (mine && isOpen) button('Done', `!done ${id}`);
  if (!job.assignee && isOpen) button('Take it', `!assign ${id} ${state.account}`);
  if (isOpen) button('Add a photo', `!photo ${id}`, () => pickPhoto(`!photo ${id}`));
  if (!isOpen) button('Reopen', `!reopen ${id}`);

  const tasks = el('ul', { className: 'tasks' });
  job.tasks.forEach((task, i) => {
    const box = el('input', { type: 'checkbox', checked: task.done, disabled: task.done || !isOpen });
    box.onchange = () => { box.disabled = true; act(`!task done ${id} ${i + 1}`); };
    tasks.append(el('li', {}, el('label', { className: 'task' }, box, task.text + (task.doneBy ? ` (${task.doneBy})` : ''))));
  });
  const line = (name, placeholder, make) => {
    const input = el('input', { placeholder, autocomplete: 'off' });
    input.setAttribute('aria-label', placeholder);
    const form = el('form', { className: name }, input, el('button', { type: 'submit', textContent: 'Add' }));
    form.onsubmit = (event) => { event.preventDefault(); if (input.value.trim()) act(make(input.value.trim())); input.value = ''; };
    return form;
  };
  return [
    back,
    el('article', { className: 'job-page' },
      el('h2', {}, el('span', { className: 'status-badge', textContent: job.status }), `Job ${job.id}: ${job.title}`),
      el('p', { className: 'meta', textContent: `${jobFacts(job)} · made by ${job.creator}` }),
      job.description ? el('p', { textContent: job.description }) : null,
      buttons,
      el('h3', { textContent: 'Tasks' }), tasks, isOpen ? line('add-task', 'A task to add', (text) => `!task add ${id} ${text}`) : null,
      el('h3', { textContent: 'Photos' }),
      job.photos.length ? el('div', {}, ...job.photos.map((p) => el('p', {}, rich(`${p.url} ${p.caption}`.trim()), el('span', { className: 'meta', textContent: ` — ${p.by}` })))) : el('p', { className: 'meta', textContent: 'None yet.' }),
      el('h3', { textContent: 'Comments' }),
      el('ul', { className: 'comments' }, ...[...comments].reverse().map((m) => el('li', {}, el('strong', { textContent: m.author + ' ' }), m.text))),
      line('add-comment', 'A comment', (text) => `!comment ${id} ${text}`),
      el('h3', { textContent: 'Activity' }),
      el('ul', { className: 'activity' }, ...activity.map((e) => el('li', { className: 'meta', textContent: `${when(e.at)} — ${e.text}` })))),
  ];
}

/// A new job, as `!job add <title> [@assignee] [due <when>] [-- <description>]`.
function jobForm() {
  const field = (label, input) => el('label', {}, label, input);
  const title = el('input', { required: true, maxLength: 200 });
  const assignee = el('input', { placeholder: 'me, a name, or nobody', autocapitalize: 'none', spellcheck: false });
  const due = el('input', { type: 'datetime-local' });
  const description = el('input', {});
  const form = el('form', { className: 'job-form' },
    el('h2', { textContent: `New job in ${state.current.name}` }),
    field('What needs doing', title), field('Who does it', assignee), field('Due', due), field('Details', description),
    el('div', { className: 'buttons' }, el('button', { type: 'submit', textContent: 'Make the job' }),
      el('button', { type: 'button', className: 'secondary', textContent: 'Cancel', onclick: () => { views.form = false; renderJobs(); } })));
  form.onsubmit = (event) => {
    event.preventDefault();
    const who = assignee.value.trim().replace(/^@/, '');
    const words = [`!job add ${title.value.trim()}`];
    if (who && who.toLowerCase() !== 'nobody') words.push(`@${who}`);
    if (due.value) words.push(`due ${due.value.replace('T', ' ')}`);
    if (description.value.trim()) words.push(`-- ${description.value.trim()}`);
    views.form = false;
    views.filter = 'Open';
    act(words.join(' '));
  };
  setTimeout(() => title.focus(), 0);
  return form;
}

// ---- The Chores view: whose turn it is, what comes next, and the room's shared lists -----------

async function choresPage(c) {
  const room = encodeURIComponent(c.name);
  const [{ chores }, { turns }, { lists }] = await Promise.all([
    api(`/api/v1/chores?room=${room}`), api(`/api/v1/agenda?days=7&room=${room}`), api(`/api/v1/lists?room=${room}`)]);
  const me = fold(state.account);
  const section = (title, ...children) => el('section', { className: 'panel-section' }, el('h3', { textContent: title }), ...children);
  const button = (label, command, onclick = () => act(command)) => {
    const b = el('button', { type: 'button', textContent: label, onclick });
    b.dataset.command = command;
    return b;
  };

  const cards = chores.map((chore) => {
    const mine = chore.turn && fold(chore.turn) === me;
    const others = chore.rotation.filter((name) => fold(name) !== me);
    const swap = el('select', {}, el('option', { value: '', textContent: 'Swap with…' }), ...others.map((name) => el('option', { value: name, textContent: name })));
    swap.setAttribute('aria-label', `Swap ${chore.name} with`);
    swap.onchange = () => { if (swap.value) act(`!swap ${chore.name} ${swap.value}`); };
    const node = el('article', { className: 'chore-card' },
      el('h4', { textContent: chore.name }),
      el('p', { className: 'turn', textContent: chore.turn ? `${mine ? 'Your' : `${chore.turn}'s`} turn${chore.due ? `, due ${when(chore.due)}` : ''}` : 'Nobody is in its rotation.' }),
      el('p', { className: 'meta', textContent: `${chore.every} · ${chore.rotation.join(' → ')}` }),
      el('div', { className: 'buttons' },
        button('Done', `!done ${chore.name}`), mine ? button('Skip', `!skip ${chore.name}`) : null,
        chore.rotation.some((name) => fold(name) === me) && others.length ? swap : null));
    node.dataset.chore = chore.name;
    if (mine) node.classList.add('mine');
    return node;
  });

  const agenda = el('ul', { className: 'agenda' }, ...turns.map((turn) =>
    el('li', { className: turn.person && fold(turn.person) === me ? 'mine' : '' }, `${when(turn.due)} — ${turn.chore}: ${turn.person}`)));

  const listNodes = lists.map((list) => {
    const items = el('ul', { className: 'tasks' }, ...list.items.map((item, i) => {
      const box = el('input', { type: 'checkbox', checked: item.done, disabled: item.done });
      box.onchange = () => { box.disabled = true; act(`!list ${list.name} done ${i + 1}`); };
      return el('li', {}, el('label', { className: 'task' }, box, item.text));
    }));
    const input = el('input', { placeholder: `Add to ${list.name}`, autocomplete: 'off' });
    input.setAttribute('aria-label', `Add to ${list.name}`);
    const form = el('form', { className: `add-item-${list.name}` }, input, el('button', { type: 'submit', textContent: 'Add' }));
    form.onsubmit = (event) => { event.preventDefault(); if (input.value.trim()) act(`!list ${list.name} add ${input.value.trim()}`); input.value = ''; };
    return el('article', { className: 'list-card' }, el('h4', { textContent: list.name }), items, form);
  });
  const newList = el('input', { placeholder: 'New list: name and first item', autocomplete: 'off' });
  newList.setAttribute('aria-label', 'A new list');
  const newListForm = el('form', { className: 'new-list' }, newList, el('button', { type: 'submit', textContent: 'Start' }));
  newListForm.onsubmit = (event) => {
    event.preventDefault();
    const [name, ...item] = newList.value.trim().split(/\s+/);
    if (name && item.length) act(`!list ${name} add ${item.join(' ')}`);
    newList.value = '';
  };

  return [
    section('Chores', ...(cards.length ? cards : [el('p', { className: 'meta', textContent: `No chores in ${c.name} yet: !chore add dishes every day at 20:00 makes one.` })])),
    section('Coming up this week', turns.length ? agenda : el('p', { className: 'meta', textContent: 'No turns in the next 7 days.' })),
    section('Lists', ...listNodes, newListForm),
  ];
}

// ---- Chorus's own views: Time (one big Start/Stop, the week, the plan) and Me ---------------------

const minutes = (seconds) => {
  const m = Math.round(seconds / 60);
  return m >= 60 ? `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m` : `${m}m`;
};

async function timePage() {
  const [time, report] = await Promise.all([api('/api/v1/time'), api('/api/v1/time/report?q=week')]);
  const running = time.running;
  const big = el('section', { className: 'timer' });
  if (running) {
    const since = new Date(running.start);
    big.append(
      el('p', { className: 'timer-now', textContent: `${running.mode || `job ${running.job}`} since ${timeFormat.format(since)}` }),
      el('p', { className: 'timer-clock', textContent: minutes((Date.now() - since) / 1000) }),
      actButton('Stop', '!track stop', 'big stop'));
    const others = time.modes.filter((m) => m !== running.mode);
    if (others.length) {
      const to = el('select', {}, el('option', { value: '', textContent: 'Switch to…' }), ...others.map((m) => el('option', { value: m, textContent: m })));
      to.setAttribute('aria-label', 'Switch to another mode');
      to.onchange = () => { if (to.value) act(`!track switch ${to.value}`); };
      big.append(to);
    }
  } else {
    const mode = el('input', { value: time.modes[0] || 'work', autocapitalize: 'none', spellcheck: false });
    mode.setAttribute('list', 'modes');
    mode.setAttribute('aria-label', 'Mode');
    const start = actButton('Start', '', 'big start');
    start.onclick = () => { if (mode.value.trim()) act(`!track start ${mode.value.trim().split(/\s+/)[0]}`); };
    big.append(el('p', { className: 'timer-now', textContent: 'No timer runs.' }), mode,
      el('datalist', { id: 'modes' }, ...time.modes.map((m) => el('option', { value: m }))), start);
  }

  // The last seven days, a bar each, and this week by mode against the plan.
  const days = [];
  for (let i = 6; i >= 0; i -= 1) days.push(dayOf(new Date(Date.now() - i * 86400000)));
  const perDay = new Map(days.map((d) => [d, 0]));
  for (const entry of time.entries) {
    const start = new Date(entry.start), end = entry.end ? new Date(entry.end) : new Date();
    const day = dayOf(start);
    if (perDay.has(day)) perDay.set(day, perDay.get(day) + (end - start) / 1000);
  }
  const most = Math.max(3600, ...perDay.values());
  const weekday = new Intl.DateTimeFormat(undefined, { weekday: 'short' });
  const chart = el('div', { className: 'week-chart', role: 'img' });
  chart.setAttribute('aria-label', days.map((d) => `${weekday.format(new Date(d))} ${minutes(perDay.get(d))}`).join(', '));
  for (const d of days) {
    const bar = el('div', { className: 'bar' });
    bar.style.height = `${Math.round(perDay.get(d) / most * 100)}%`;
    chart.append(el('div', { className: 'day-column' }, el('span', { className: 'amount', textContent: perDay.get(d) ? minutes(perDay.get(d)) : '' }),
      el('div', { className: 'bar-box' }, bar), el('span', { className: 'label', textContent: weekday.format(new Date(d)) })));
  }
  const table = el('table', { className: 'report' },
    el('thead', {}, el('tr', {}, el('th', { textContent: 'Mode' }), el('th', { textContent: 'This week' }), el('th', { textContent: 'Planned' }))),
    el('tbody', {}, ...report.rows.map((row) => el('tr', {}, el('td', { textContent: row.label }), el('td', { textContent: minutes(row.seconds) }),
      el('td', { textContent: row.planned == null ? '—' : minutes(row.planned) })))),
    el('tfoot', {}, el('tr', {}, el('th', { textContent: 'Total' }), el('th', { textContent: minutes(report.total) }), el('th', {}))));

  const today = dayOf(new Date());
  const entries = el('ul', { className: 'entries' }, ...time.entries.filter((e) => dayOf(new Date(e.start)) === today).map((entry) =>
    el('li', {}, `${timeFormat.format(new Date(entry.start))}–${entry.end ? timeFormat.format(new Date(entry.end)) : 'now'} ${entry.mode || `job ${entry.job}`}`
      + (entry.end ? ` (${minutes((new Date(entry.end) - new Date(entry.start)) / 1000)})` : ''), ' ',
    entry.end ? actButton('Remove', `!track rm ${entry.id}`, 'link') : null)));
  return [big,
    el('section', { className: 'panel-section' }, el('h3', { textContent: 'The last seven days' }), chart),
    el('section', { className: 'panel-section' }, el('h3', { textContent: report.heading }), report.rows.length ? table : el('p', { className: 'meta', textContent: 'Nothing tracked this week yet.' })),
    el('section', { className: 'panel-section' }, el('h3', { textContent: 'Today' }), entries.childElementCount ? entries : el('p', { className: 'meta', textContent: 'No entries today.' }))];
}

function actButton(label, command, className = '') {
  const b = el('button', { type: 'button', textContent: label, className });
  if (command) { b.dataset.command = command; b.onclick = () => act(command); }
  return b;
}

/// What is the person's to do, across their rooms.
async function mePage() {
  const { account, rooms } = await api('/api/v1/me');
  const [agenda, ...jobLists] = await Promise.all([api('/api/v1/agenda?days=7'),
    ...rooms.map((r) => api(`/api/v1/jobs?${new URLSearchParams({ room: r.name, status: 'open', assignee: account, limit: '50' })}`)),
    api(`/api/v1/jobs?${new URLSearchParams({ status: 'open', limit: '50' })}`)]);
  const jobs = jobLists.flatMap((list) => list.jobs);
  const jobItems = jobs.map((job) => {
    const open = el('button', { type: 'button', className: 'link', textContent: `${job.id} · ${job.title}` });
    open.onclick = () => {
      const room = job.room && state.conversations.get(fold(job.room));
      if (room) { select(room); openJob(job.id); }
    };
    return el('li', {}, open, el('span', { className: 'meta', textContent: ` ${job.room || 'personal'} · ${jobFacts(job)}` }));
  });
  return [
    el('section', { className: 'panel-section' }, el('h2', { textContent: account }),
      el('p', { className: 'meta', textContent: rooms.map((r) => `${r.name} (${r.role})`).join(' · ') || 'In no room yet.' })),
    el('section', { className: 'panel-section' }, el('h3', { textContent: 'My open jobs' }),
      jobItems.length ? el('ul', { className: 'jobs-mine' }, ...jobItems) : el('p', { className: 'meta', textContent: 'No open jobs. Nice.' })),
    el('section', { className: 'panel-section' }, el('h3', { textContent: 'My turns this week' }),
      agenda.turns.length ? el('ul', { className: 'agenda' }, ...agenda.turns.map((t) => el('li', {}, `${when(t.due)} — ${t.chore} in ${t.room}`)))
        : el('p', { className: 'meta', textContent: 'No turns in the next 7 days.' })),
  ];
}

// ---- The Requests view: service requests the person posted, was hired for, or may offer on -------

const money = (cents) => cents == null ? '' : (cents % 100 ? (cents / 100).toFixed(2) : String(cents / 100));

async function requestsPage() {
  if (views.request === 'new') return [requestForm()];
  if (views.request) return requestPage(views.request);
  const scope = views.scope || 'mine';
  const chips = el('div', { className: 'chips', role: 'group' });
  chips.setAttribute('aria-label', 'Which requests');
  for (const [name, value] of [['Mine', 'mine'], ['To offer on', 'open']]) {
    const chip = el('button', { type: 'button', textContent: name });
    chip.setAttribute('aria-pressed', String(value === scope));
    chip.onclick = () => { views.scope = value; renderJobs(); };
    chips.append(chip);
  }
  const post = el('button', { type: 'button', className: 'new', textContent: 'Post a request' });
  post.onclick = () => { views.request = 'new'; renderJobs(); };
  chips.append(post);
  let listed;
  try {
    listed = await api(`/api/v1/requests?scope=${scope}`);
  } catch (error) {
    return [chips, el('p', { className: 'meta', textContent: error.message })];
  }
  const list = el('ul', { className: 'jobs-list' }, ...listed.requests.map((r) => {
    const open = el('button', { type: 'button' },
      el('span', {}, el('span', { className: 'status-badge', textContent: r.status }), `${r.id} · ${r.category}: ${r.description}`),
      el('span', { className: 'meta', textContent: [`by ${r.customer}`, r.contractor ? `→ ${r.contractor}` : null,
        r.budgetCents != null ? `budget ${money(r.budgetCents)}` : null, r.place].filter(Boolean).join(' · ') }));
    open.dataset.request = String(r.id);
    open.onclick = () => { views.request = r.id; renderJobs(); };
    return el('li', {}, open);
  }));
  return [chips, listed.requests.length ? list : el('p', { className: 'meta', textContent: scope === 'mine'
    ? 'No requests yet. Post a request to ask for a hand: contractors with that skill are told.' : 'No open requests in your skills.' })];
}

async function requestPage(id) {
  const { request: r, offers, history } = await api(`/api/v1/requests/${id}`);
  const me = fold(state.account);
  const customer = fold(r.customer) === me;
  const hired = r.contractor && fold(r.contractor) === me;
  const back = el('button', { type: 'button', className: 'link', textContent: '‹ All requests' });
  back.onclick = () => { views.request = null; renderJobs(); };
  const buttons = el('div', { className: 'buttons' });
  if (hired && (r.status === 'hired' || r.status === 'disputed')) buttons.append(actButton('Mark it done', `!request done ${id}`));
  if (customer && r.status === 'done') buttons.append(actButton('Confirm', `!request confirm ${id}`));
  const reasonForm = (label, verb) => {
    const input = el('input', { placeholder: `${label}: why?`, autocomplete: 'off' });
    input.setAttribute('aria-label', `${label}: why?`);
    const form = el('form', { className: verb }, input, el('button', { type: 'submit', textContent: label }));
    form.onsubmit = (event) => { event.preventDefault(); if (input.value.trim()) act(`!request ${verb} ${id} ${input.value.trim()}`); };
    return form;
  };
  const offerList = el('ul', { className: 'offers' }, ...offers.map((o) => el('li', {},
    `${o.contractor}: ${money(o.priceCents)}${o.note ? ` — ${o.note}` : ''} `,
    customer && r.status === 'open' ? actButton(`Hire ${o.contractor}`, `!hire ${id} ${o.contractor}`) : null)));
  const offerForm = (() => {
    if (customer || r.status !== 'open') return null;
    const price = el('input', { inputMode: 'decimal', placeholder: 'Your price', autocomplete: 'off' });
    const note = el('input', { placeholder: 'A note (optional)', autocomplete: 'off' });
    price.setAttribute('aria-label', 'Your price');
    note.setAttribute('aria-label', 'A note');
    const form = el('form', { className: 'offer' }, price, note, el('button', { type: 'submit', textContent: 'Offer' }));
    form.onsubmit = (event) => { event.preventDefault(); if (price.value.trim()) act(`!offer ${id} ${price.value.trim()} ${note.value.trim()}`.trim()); };
    return form;
  })();
  const reviewForm = (() => {
    if (!customer || !['confirmed', 'cancelled'].includes(r.status) || !r.contractor) return null;
    const rating = el('select', {}, ...[5, 4, 3, 2, 1].map((n) => el('option', { value: String(n), textContent: `${n}/5` })));
    rating.setAttribute('aria-label', 'Rating');
    const text = el('input', { placeholder: 'How was it?', autocomplete: 'off' });
    text.setAttribute('aria-label', 'Your review');
    const form = el('form', { className: 'review' }, rating, text, el('button', { type: 'submit', textContent: 'Review' }));
    form.onsubmit = (event) => { event.preventDefault(); if (text.value.trim()) act(`!review ${id} ${rating.value} ${text.value.trim()}`); };
    return form;
  })();
  const message = el('input', { placeholder: 'A message to the other party', autocomplete: 'off' });
  message.setAttribute('aria-label', 'A message');
  const messageForm = el('form', { className: 'message' }, message, el('button', { type: 'submit', textContent: 'Send' }));
  messageForm.onsubmit = (event) => { event.preventDefault(); if (message.value.trim()) act(`!request msg ${id} ${message.value.trim()}`); };
  return [
    back,
    el('article', { className: 'job-page' },
      el('h2', {}, el('span', { className: 'status-badge', textContent: r.status }), `Request ${r.id}: ${r.category}`),
      el('p', { textContent: r.description }),
      el('p', { className: 'meta', textContent: [`by ${r.customer}`, r.contractor ? `→ ${r.contractor}` : null, r.window,
        r.budgetCents != null ? `budget ${money(r.budgetCents)}` : null, r.place].filter(Boolean).join(' · ') }),
      buttons,
      customer && r.status === 'open' ? reasonForm('Cancel', 'cancel') : null,
      customer && r.status === 'done' ? reasonForm('Dispute', 'dispute') : null,
      reviewForm,
      el('h3', { textContent: 'Offers' }), offers.length ? offerList : el('p', { className: 'meta', textContent: 'No offers yet.' }), offerForm,
      el('h3', { textContent: 'Conversation and history' }),
      el('ul', { className: 'activity' }, ...history.map((e) => el('li', { className: 'meta', textContent: `${when(e.at)} — ${e.text}` }))),
      customer || hired || offers.length ? messageForm : null),
  ];
}

/// A new request, as `!request add <category> <description> | when … | budget … | at …`.
function requestForm() {
  const field = (label, input) => el('label', {}, label, input);
  const category = el('input', { required: true, placeholder: 'plumbing', autocapitalize: 'none' });
  const description = el('input', { required: true });
  const hours = el('input', { placeholder: 'sat 9:00-12:00' });
  const budget = el('input', { inputMode: 'decimal' });
  const place = el('input', {});
  const form = el('form', { className: 'job-form' },
    el('h2', { textContent: 'Ask for a hand' }),
    field('What kind of work (one word)', category), field('What needs doing', description), field('When (optional)', hours),
    field('Budget (optional)', budget), field('Where (optional)', place),
    el('div', { className: 'buttons' }, el('button', { type: 'submit', textContent: 'Post it' }),
      el('button', { type: 'button', className: 'secondary', textContent: 'Cancel', onclick: () => { views.request = null; renderJobs(); } })));
  form.onsubmit = (event) => {
    event.preventDefault();
    const parts = [`!request add ${category.value.trim().split(/\s+/)[0]} ${description.value.trim()}`];
    if (hours.value.trim()) parts.push(`when ${hours.value.trim()}`);
    if (budget.value.trim()) parts.push(`budget ${budget.value.trim()}`);
    if (place.value.trim()) parts.push(`at ${place.value.trim()}`);
    views.request = null;
    views.scope = 'mine';
    act(parts.join(' | '));
  };
  setTimeout(() => category.focus(), 0);
  return form;
}

// ---- Photos: taken or chosen, uploaded with the device's token, then said as a link -----------

/// `command`: the `!photo <job>` the picture is for, or nothing for a photo in the conversation.
function pickPhoto(command = null) {
  state.photoFor = { conversation: current(), command };
  $('#photo-file').value = '';
  $('#photo-file').click();
}

async function uploadPhoto(file) {
  const { conversation: c, command } = state.photoFor || { conversation: current(), command: null };
  state.photoFor = null;
  const saved = loadSaved();
  if (!saved || !saved.token) return info(c, 'This device has no token to upload with: log out and in again.');
  const note = info(c, `Uploading ${file.name || 'the photo'}…`);
  try {
    const answer = await fetch('/api/v1/photos', { method: 'POST', headers: { Authorization: `Bearer ${saved.token}`, 'Content-Type': file.type || 'application/octet-stream' }, body: file });
    const json = await answer.json().catch(() => ({}));
    removeLine(c, note);
    if (answer.status !== 201) return info(c, json.message || `The photo could not be uploaded (${answer.status}).`);
    post(c, command ? `${command} ${json.url}` : json.url);
  } catch {
    info(c, 'The photo could not be uploaded: the connection failed. Try again when you are back online.');
  }
}

// ---- Screens --------------------------------------------------------------------------------

function loadSaved() {
  try { return JSON.parse(localStorage.getItem(SAVED)); } catch { return null; }
}

function showLogin(error) {
  $('#app').hidden = true;
  $('#welcome').hidden = false;
  const box = $('#login-error');
  box.hidden = !error;
  box.textContent = error || '';
  for (const button of document.querySelectorAll('#login button')) button.disabled = false;
}

function showApp() {
  $('#welcome').hidden = true;
  $('#app').hidden = false;
  $('#me').textContent = state.account || state.credentials?.account || '';
  if (!state.account && state.credentials) state.account = state.credentials.account;
  restoreState();
  botConversation();  // always listed: where Chorus answers
  renderConversations();
  if (!state.current) {
    const first = [...state.conversations.values()].find((c) => isRoom(c.name));
    if (first) select(first);
  }
  if (!state.current) { $('#title').textContent = 'Chorus'; renderLog(); }
}

function start(mode) {
  const account = $('#account').value.trim();
  const secret = $('#password').value;
  if (!account || !secret) return showLogin('Give an account name and a password.');
  for (const button of document.querySelectorAll('#login button')) button.disabled = true;
  state.mode = mode;
  state.stayOut = false;
  state.wantsToken = mode === 'login';
  state.credentials = { account, secret, email: $('#email').value.trim() };
  $('#password').value = '';
  connect();
}

function logout() {
  const saved = loadSaved();
  if (saved && saved.tokenId) send(`PRIVMSG ${state.bot} :!token revoke ${saved.tokenId}`);
  localStorage.removeItem(SAVED);
  localStorage.removeItem(keptKey());
  state.stayOut = true;
  state.credentials = null;
  setTimeout(() => { if (state.socket) state.socket.close(); location.reload(); }, 300);
}

/// The server's settings (whom to send !commands to), asked for while the page starts: the app is
/// drawn at once with the name last known, and logging in waits for the answer, not the drawing.
const settingsReady = fetch('/client.json', { cache: 'no-cache' }).then((answer) => answer.json()).then((settings) => {
  if (settings.bot && settings.bot !== state.bot) {
    const old = state.conversations.get(fold(state.bot));
    if (old && !old.lines.length) state.conversations.delete(old.key);
    state.bot = settings.bot;
    localStorage.setItem('chorus.bot', settings.bot);
    if (state.account) { botConversation(); renderConversations(); }
  }
  document.title = settings.network || document.title;
}).catch(() => { /* the defaults do */ });

function boot() {
  state.bot = localStorage.getItem('chorus.bot') || state.bot;

  $('#login').onsubmit = (event) => { event.preventDefault(); start('login'); };
  $('#register-button').onclick = () => {
    const form = $('#login');
    if (!form.classList.contains('registering')) { form.classList.add('registering'); $('#register-button').textContent = 'Create it'; return; }
    start('register');
  };
  $('#compose').onsubmit = (event) => {
    event.preventDefault();
    const text = $('#line').value.trim();
    if (!text) return;
    $('#line').value = '';
    suggest();
    say(text);
  };
  $('#line').oninput = suggest;
  $('#photo-button').onclick = () => pickPhoto();
  for (const tab of document.querySelectorAll('#views button')) {
    tab.onclick = () => { views.job = null; views.request = null; views.form = false; views.status = ''; showView(tab.dataset.view); };
  }
  $('#photo-file').onchange = () => { const file = $('#photo-file').files[0]; if (file) uploadPhoto(file); };
  $('#line').onkeydown = (event) => {
    if (event.key !== 'Tab') return;
    const first = $('#suggestions button');
    if (first && !$('#suggestions').hidden) { event.preventDefault(); first.click(); }
  };
  $('#join-form').onsubmit = (event) => {
    event.preventDefault();
    joinRoom($('#join-name').value);
    $('#join-name').value = '';
  };
  $('#menu').onclick = () => setDrawer(!$('#app').classList.contains('drawer'));
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && $('#app').classList.contains('drawer')) { setDrawer(false); $('#menu').focus(); }
  });
  narrow.addEventListener('change', () => setDrawer(false));
  setDrawer(false);
  $('#logout').onclick = logout;
  $('#log').addEventListener('scroll', () => {
    const c = state.current;
    if (c && $('#log').scrollTop < 20 && !c.complete && c.oldest && !c.loading) loadHistory(c, 'before');
  });
  document.addEventListener('visibilitychange', () => { if (state.current) markRead(state.current); });
  window.addEventListener('online', () => { if (!state.socket && state.credentials) { state.retry = 0; connect(); } });

  // Installed, the app opens without a network: its files from the service worker, its last
  // known state from this device.
  if ('serviceWorker' in navigator) navigator.serviceWorker.register('/sw.js').catch(() => {});

  const saved = loadSaved();
  if (saved && saved.token) {
    state.credentials = { account: saved.account, secret: saved.token };
    state.mode = 'login';
    showApp();
    connect();
  } else showLogin();
}

boot();
