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
  jobs: new Map(),          // job id → {status, assignee}
  batches: new Map(),       // batch id → {target, lines, kind}
  retry: 0,
  retryTimer: null,
  stayOut: false,           // logged out: no reconnect
  lastCommandIn: null,      // the conversation a !command was last typed in: where its answer goes
  wantsToken: false,
  helpPending: 0,           // lines of the !help asked for at login, read for completion and not shown
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

// ---- The socket -----------------------------------------------------------------------------

function send(line) {
  if (state.socket && state.socket.readyState === WebSocket.OPEN) state.socket.send(line);
}

function connect() {
  clearTimeout(state.retryTimer);
  setStatus('connecting…');
  const socket = new WebSocket(`wss://${location.host}/socket`, ['text.ircv3.net']);
  state.socket = socket;
  state.registered = false;
  socket.onopen = () => {
    const { account } = state.credentials;
    send('CAP LS 302');
    send(`NICK ${account}`);
    send(`USER ${account} 0 * :Chorus web`);
  };
  socket.onmessage = (event) => receive(parse(event.data));
  socket.onclose = () => {
    if (state.socket !== socket) return;
    state.socket = null;
    // Requests that were on the way are lost with the connection: asked again after the next JOIN.
    for (const c of state.conversations.values()) { c.joined = false; c.loading = false; }
    state.batches.clear();
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
  const handler = handlers[msg.command];
  if (handler) handler(msg);
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
    else info(current(), m.params.at(-1));
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
    state.helpPending = 2;
    sendToBot('!help');
    // Rooms the account is in are joined by the server; a private conversation catches up here,
    // and those this page does not know yet (after a reload, or from another device) are listed.
    for (const c of state.conversations.values()) if (!isRoom(c.name) && c.newest) loadHistory(c, 'after');
    send(`CHATHISTORY TARGETS timestamp=${new Date(Date.now() + 60000).toISOString()} timestamp=1970-01-01T00:00:00.000Z 100`);
  },
  433: (m) => {
    if (!state.registered) send(`NICK ${state.credentials.account}_${Math.floor(Math.random() * 1000)}`);
  },
  NICK: (m) => { if (fold(m.nick) === fold(state.me)) state.me = m.params[0]; },
  JOIN: (m) => {
    const room = conversation(m.params[0]);
    if (fold(m.nick) !== fold(state.me)) return;
    room.joined = true;
    renderConversations();
    if (!state.current) select(room);
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
    if (m.params[0].startsWith('+')) state.batches.set(ref, { kind, target, lines: [] });
    else {
      const batch = state.batches.get(ref);
      state.batches.delete(ref);
      if (batch) batchEnded(batch);
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
    // Chorus's answers: shown where the question was asked, or in the room the event is about.
    const room = m.tags['+draft/channel-context'] || m.tags['chorus/room'];
    if (room && state.conversations.has(fold(room))) return conversation(room);
    if (!m.tags['chorus/event'] && state.lastCommandIn) return state.lastCommandIn;
    return conversation(state.bot);
  }
  return conversation(fold(m.nick) === fold(state.me) ? target : m.nick);
}

function message(m) {
  if (!state.registered && m.command === 'NOTICE') return;
  const text = m.params.at(-1) || '';
  if (fold(m.nick) === fold(state.bot) && captureToken(text)) return;
  if (fold(m.nick) === fold(state.bot) && captureCommands(text)) return;
  const c = conversationOf(m);
  const line = lineOf(m);
  if (!add(c, line)) return;
  if (c !== state.current && !line.self) c.unread += 1;
  renderConversations();
  if (c === state.current) { appendLine(line, true); markRead(c); }
  if (line.tags['chorus/job']) refreshCards(line.tags['chorus/job']);
}

/// A job changed: the buttons of its earlier cards follow (no Start on a job that is done).
function refreshCards(job) {
  for (const node of document.querySelectorAll(`#log .card[data-job="${CSS.escape(job)}"]`)) node.replaceWith(card(node.line));
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
  if (line.tags['chorus/job']) noteJob(line.tags);
  return true;
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
  }
  countUnread(c);
  if (c === state.current) markRead(c);
  renderConversations();
  if (c === state.current) renderLog(how !== 'before');
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

// ---- Chorus: token, commands, cards ---------------------------------------------------------

function sendToBot(text) { send(`PRIVMSG ${state.bot} :${text}`); }

function requestToken() {
  state.wantsToken = false;
  const device = /Mobi/.test(navigator.userAgent) ? 'phone' : 'browser';
  sendToBot(`!token new web ${device}`);
}

function captureToken(text) {
  const found = /^Token (\d+) \(.*\): (chorus-[0-9a-f]{64})$/.exec(text);
  if (!found) return /^It is shown this once\./.test(text) && loadSaved()?.account === state.account;
  localStorage.setItem(SAVED, JSON.stringify({ account: state.account, token: found[2], tokenId: found[1] }));
  state.credentials = { account: state.account, secret: found[2] };
  return true;
}

/// Reads the command list out of a !help answer; true when it is the one asked for at login.
function captureCommands(text) {
  const found = /^Commands you can use[^:]*: (.*)$/.exec(text);
  if (found) state.commands = found[1].split(' ').filter((c) => c.startsWith('!'));
  if (!found && !text.startsWith('!help <command>')) return false;
  if (state.helpPending === 0) return false;
  state.helpPending -= 1;
  return true;
}

function noteJob(tags) {
  const id = tags['chorus/job'];
  const known = state.jobs.get(id) || {};
  state.jobs.set(id, {
    status: tags['chorus/status'] || tags['chorus/to'] || known.status || 'created',
    assignee: tags['chorus/assignee'] ?? known.assignee,
  });
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
      if (['created', 'assigned', 'in-progress'].includes(job.status)) actions.push(['Done', `!done ${t['chorus/job']}`]);
    }
  } else if (t['chorus/chore'] && /^turn\.(started|due|overdue|swapped)$/.test(event) && fold(t['chorus/turn'] || '') === me) {
    actions.push(['Done', `!done ${t['chorus/chore']}`]);
  } else if (event === 'request.offered' && fold(t['chorus/customer'] || '') === me && t['chorus/contractor']) {
    actions.push([`Hire ${t['chorus/contractor']}`, `!hire ${t['chorus/request']} ${t['chorus/contractor']}`]);
  }
  return actions;
}

const EVENT_KINDS = { job: 'Job', task: 'Job', ask: 'Request to a manager', turn: 'Chore', chore: 'Chore', request: 'Service request',
  time: 'Time', list: 'List', member: 'Room', room: 'Room' };

function card(line) {
  const event = line.tags['chorus/event'];
  const kind = EVENT_KINDS[event.split('.')[0]] || 'Chorus';
  const number = line.tags['chorus/job'] ? ` ${line.tags['chorus/job']}` : line.tags['chorus/request'] ? ` ${line.tags['chorus/request']}` : '';
  const node = el('div', { className: 'card' }, el('span', { className: 'kind', textContent: kind + number + ' · ' + event }), rich(line.text));
  node.dataset.event = event;
  node.line = line;
  if (line.tags['chorus/job']) node.dataset.job = line.tags['chorus/job'];
  const buttons = el('div', { className: 'buttons' });
  for (const [label, command] of actionsFor(line)) {
    const button = el('button', { type: 'button', textContent: label });
    button.dataset.command = command;
    button.onclick = () => { button.disabled = true; say(command); };
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
    let url = found[0];
    try {
      // The server's own report links open here, whatever name the server gave itself.
      const parsed = new URL(url);
      if (parsed.pathname.startsWith('/report.')) url = location.origin + parsed.pathname + parsed.search;
      if (parsed.pathname === '/report.svg') {
        span.append(el('img', { className: 'report', src: url, alt: 'Report chart', loading: 'lazy' }), ' ');
      }
    } catch { /* not a URL after all */ }
    span.append(el('a', { href: url, textContent: found[0].includes('/report.') ? (found[0].includes('.csv') ? 'CSV' : 'Chart') : url,
      target: '_blank', rel: 'noreferrer' }));
    at = found.index + url.length;
  }
  span.append(text.slice(at));
  if (/[\u2580-\u259f]/.test(text) || /^ {2}\S.* {2,}/.test(text)) {
    return el('pre', {}, span);  // bars and tables keep their columns
  }
  return span;
}

// ---- Drawing --------------------------------------------------------------------------------

const timeFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });

function lineNode(line) {
  if (line.tags['chorus/event']) return el('div', { className: 'line' }, el('time', { textContent: timeFormat.format(line.time) }), card(line));
  const classes = ['line', line.command === 'NOTICE' ? 'notice' : '', line.self ? 'self' : '', line.info ? 'info' : ''].filter(Boolean);
  const action = /^\x01ACTION (.*)\x01?$/.exec(line.text);
  const body = el('div', {}, line.nick ? el('span', { className: 'nick', textContent: action ? `* ${line.nick}` : line.nick }) : null,
    rich(action ? action[1].replace(/\x01$/, '') : line.text));
  const node = el('div', { className: classes.join(' ') }, el('time', { textContent: timeFormat.format(line.time), dateTime: line.time.toISOString() }), body);
  if (line.id) node.dataset.id = line.id;
  return node;
}

function current() { return state.current || conversation(state.bot); }

function info(c, text) {
  const line = { id: null, time: new Date(), nick: '', command: 'NOTICE', text, tags: {}, self: false, info: true };
  c.lines.push(line);
  if (c === state.current) appendLine(line, true);
}

function appendLine(line, scroll) {
  const log = $('#log');
  const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
  log.append(lineNode(line));
  if (scroll && (atBottom || line.self)) log.scrollTop = log.scrollHeight;
}

function renderLog(toBottom = true) {
  const log = $('#log');
  const c = state.current;
  const before = log.scrollHeight - log.scrollTop;
  log.replaceChildren();
  if (!c) return;
  if (!c.complete && c.oldest) log.append(el('div', { className: 'older', textContent: 'Scroll up for earlier lines' }));
  for (const line of c.lines) log.append(lineNode(line));
  log.scrollTop = toBottom ? log.scrollHeight : log.scrollHeight - before;
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
    (isRoom(c.name) ? rooms : people).append(item);
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
  $('#app').classList.remove('drawer');
  renderConversations();
  renderLog();
  if (!c.lines.length && !c.loading && (c.joined || !isRoom(c.name))) loadHistory(c, 'latest');
  markRead(c);
}

// ---- What the person types ------------------------------------------------------------------

function say(text) {
  const c = current();
  if (text.startsWith('/')) return slashCommand(text.slice(1));
  if (text.startsWith('!')) state.lastCommandIn = c;
  send(`PRIVMSG ${c.name} :${text}`);
}

function slashCommand(text) {
  const [verb, ...rest] = text.split(' ');
  const args = rest.join(' ');
  switch (verb.toLowerCase()) {
    case 'join': {
      const name = args.trim().split(' ')[0];
      if (!name) return;
      const room = name.startsWith('#') ? name : `#${name}`;
      send(`JOIN ${room}`);
      return;
    }
    case 'part': case 'leave': return send(`PART ${args || current().name}`);
    case 'msg': case 'query': {
      const [nick, ...words] = rest;
      if (!nick) return;
      const c = conversation(nick);
      renderConversations();
      select(c);
      if (words.length) send(`PRIVMSG ${nick} :${words.join(' ')}`);
      return;
    }
    case 'me': return send(`PRIVMSG ${current().name} :\x01ACTION ${args}\x01`);
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
  $('#me').textContent = state.account;
  if (!state.current) { $('#title').textContent = 'Chorus'; }
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
  if (saved && saved.tokenId) sendToBot(`!token revoke ${saved.tokenId}`);
  localStorage.removeItem(SAVED);
  state.stayOut = true;
  state.credentials = null;
  setTimeout(() => { if (state.socket) state.socket.close(); location.reload(); }, 300);
}

async function boot() {
  try {
    const settings = await (await fetch('/client.json', { cache: 'no-cache' })).json();
    state.bot = settings.bot || state.bot;
    document.title = settings.network || document.title;
  } catch { /* the defaults do */ }

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
  $('#line').onkeydown = (event) => {
    if (event.key !== 'Tab') return;
    const first = $('#suggestions button');
    if (first && !$('#suggestions').hidden) { event.preventDefault(); first.click(); }
  };
  $('#join-form').onsubmit = (event) => {
    event.preventDefault();
    const name = $('#join-name').value.trim();
    if (name) slashCommand(`join ${name}`);
    $('#join-name').value = '';
  };
  $('#menu').onclick = () => $('#app').classList.toggle('drawer');
  $('#logout').onclick = logout;
  $('#log').addEventListener('scroll', () => {
    const c = state.current;
    if (c && $('#log').scrollTop < 20 && !c.complete && c.oldest && !c.loading) loadHistory(c, 'before');
  });
  document.addEventListener('visibilitychange', () => { if (state.current) markRead(state.current); });
  window.addEventListener('online', () => { if (!state.socket && state.credentials) { state.retry = 0; connect(); } });

  const saved = loadSaved();
  if (saved && saved.token) {
    state.credentials = { account: saved.account, secret: saved.token };
    state.mode = 'login';
    showApp();
    $('#me').textContent = saved.account;
    connect();
  } else showLogin();
}

boot();
