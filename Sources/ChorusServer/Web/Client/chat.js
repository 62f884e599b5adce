// Chorus in a browser, 2 of 5: Chorus's token and commands, event cards, drawing the conversations,
// the state kept on the device, and what the person types.
'use strict';

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
  // One token per device: logging in again on it renews that token rather than adding one.
  let id = localStorage.getItem('chorus.device');
  if (!id) { id = Math.random().toString(16).slice(2, 8); localStorage.setItem('chorus.device', id); }
  const device = /Mobi/.test(navigator.userAgent) ? 'phone' : 'browser';
  askBot(`!token renew web ${device} ${id}`, (lines) => {
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
  'room.settings': 'settings', 'time.logged': 'logged', 'time.corrected': 'time corrected', 'time.nudge': 'timer still running', 'time.planned': 'planned',
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
  views.editing = null;
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
