// Chorus in a browser, 4 of 5: a room's Chores; Chorus's own Time, Me and Requests.
'use strict';

// ---- The Chores view: whose turn it is, what comes next, and the room's shared lists -----------

async function choresPage(c) {
  const room = encodeURIComponent(c.name);
  const [{ chores }, { turns }, { lists }] = await Promise.all([
    api(`/api/v1/chores?room=${room}`), api(`/api/v1/agenda?days=7&room=${room}`), api(`/api/v1/lists?room=${room}`)]);
  const me = fold(state.account);
  const section = (title, ...children) => el('section', { className: 'panel-section' }, el('h3', { textContent: title }), ...children);

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
        actButton('Done', `!done ${chore.name}`), mine ? actButton('Skip', `!skip ${chore.name}`) : null,
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

const clock = (iso) => { const d = new Date(iso); return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`; };

/// An entry's times and mode to change: each one changed is its own `!track edit`; with no entry, a
/// new one for today (`!track add`).
function entryForm(entry, modes) {
  const field = (label, input) => el('label', {}, label, input);
  const start = el('input', { type: 'time', required: true, value: entry ? clock(entry.start) : '' });
  const end = el('input', { type: 'time', required: true, value: entry && entry.end ? clock(entry.end) : '' });
  const mode = el('input', { value: entry ? entry.mode || '' : modes[0] || 'work', autocapitalize: 'none', spellcheck: false });
  mode.setAttribute('list', 'entry-modes');
  const done = () => { views.editing = null; renderJobs(); };
  const onJob = entry && !entry.mode;
  const form = el('form', { className: 'job-form entry-form' },
    el('h2', { textContent: entry ? `Edit entry ${entry.id}` : 'Add time for today' }),
    onJob ? el('p', { className: 'meta', textContent: `On job ${entry.job}` }) : field('Mode', mode),
    el('datalist', { id: 'entry-modes' }, ...modes.map((m) => el('option', { value: m }))),
    field('From', start), field('To', end),
    el('div', { className: 'buttons' }, el('button', { type: 'submit', textContent: entry ? 'Save' : 'Add' }),
      el('button', { type: 'button', className: 'secondary', textContent: 'Cancel', onclick: done })));
  form.onsubmit = (event) => {
    event.preventDefault();
    if (!entry) {
      act(`!track add ${mode.value.trim().split(/\s+/)[0]} ${start.value}-${end.value}`);
    } else {
      // The end first when the entry moves later, the start first when it moves earlier: never an empty span between.
      const edits = [];
      if (start.value !== clock(entry.start)) edits.push(`!track edit ${entry.id} start ${start.value}`);
      if (entry.end && end.value !== clock(entry.end)) edits[start.value > clock(entry.start) ? 'unshift' : 'push'](`!track edit ${entry.id} end ${end.value}`);
      if (!onJob && mode.value.trim() && mode.value.trim() !== entry.mode) edits.push(`!track edit ${entry.id} mode ${mode.value.trim().split(/\s+/)[0]}`);
      edits.forEach(act);
    }
    done();
  };
  setTimeout(() => start.focus(), 0);
  return form;
}

async function timePage() {
  const [time, report] = await Promise.all([api('/api/v1/time'), api('/api/v1/time/report?q=week')]);
  if (views.editing === 'new-entry') return [entryForm(null, time.modes)];
  const editing = time.entries.find((e) => `entry-${e.id}` === views.editing);
  if (editing) return [entryForm(editing, time.modes)];
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
    entry.end ? actButton('Edit', `!track edit ${entry.id}`, 'link', () => { views.editing = `entry-${entry.id}`; renderJobs(); }) : null, ' ',
    entry.end ? actButton('Remove', `!track rm ${entry.id}`, 'link') : null)));
  const add = el('button', { type: 'button', className: 'link add-entry', textContent: 'Add time' });
  add.onclick = () => { views.editing = 'new-entry'; renderJobs(); };
  return [big,
    el('section', { className: 'panel-section' }, el('h3', { textContent: 'The last seven days' }), chart),
    el('section', { className: 'panel-section' }, el('h3', { textContent: report.heading }), report.rows.length ? table : el('p', { className: 'meta', textContent: 'Nothing tracked this week yet.' })),
    el('section', { className: 'panel-section' }, el('h3', { textContent: 'Today' }), entries.childElementCount ? entries : el('p', { className: 'meta', textContent: 'No entries today.' }), add)];
}

// ---- Notifications on this device: Web Push (soju.im/webpush) while the page is closed ----------

const PUSH_WAIT = 10000;  // ms a browser's push service has to subscribe the device
const pushable = () => 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;

async function pushSubscription() {
  const registration = pushable() && await navigator.serviceWorker.getRegistration();
  return registration ? registration.pushManager.getSubscription() : null;
}

function registerPush(subscription, then) {
  const { p256dh, auth } = subscription.toJSON().keys;
  sendLabeled(`WEBPUSH REGISTER ${subscription.endpoint} p256dh=${p256dh};auth=${auth}`, { internal: (lines) => { if (then) then(lines); } });
}

/// At each login the device's subscription is given again: the server may have forgotten it (its
/// push service said it was gone), or the browser renewed its keys.
async function renewPush() {
  try {
    const subscription = state.vapid && await pushSubscription();
    if (subscription) registerPush(subscription);
  } catch { /* the Me view says what the browser refuses, when asked */ }
}

async function turnOnPush() {
  try {
    if (await Notification.requestPermission() !== 'granted') {
      views.pushStatus = 'Notifications are blocked for this site: allow them in the browser\'s site settings, then turn them on here.';
      return renderJobs();
    }
    const registration = await navigator.serviceWorker.getRegistration() || await navigator.serviceWorker.register('/sw.js');
    const key = Uint8Array.from(atob(state.vapid.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
    // A browser whose push service cannot be reached never answers: say so rather than wait forever.
    const subscription = await Promise.race([registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key }),
      new Promise((_, fail) => setTimeout(() => fail(new Error('its push service did not answer; try again later')), PUSH_WAIT))]);
    registerPush(subscription, (lines) => {
      const failed = lines.find((m) => m.command === 'FAIL');
      views.pushStatus = failed ? failed.params.at(-1) : 'On: this device will be told while Chorus is closed.';
      renderJobs();
    });
  } catch (error) {
    views.pushStatus = `This browser could not subscribe to notifications: ${error.message}`;
    renderJobs();
  }
}

async function turnOffPush() {
  const subscription = await pushSubscription();
  if (subscription) {
    sendLabeled(`WEBPUSH UNREGISTER ${subscription.endpoint}`, { internal: () => {} });
    await subscription.unsubscribe();
  }
  views.pushStatus = 'Off: this device is no longer told.';
  renderJobs();
}

async function notificationsSection() {
  const section = el('section', { className: 'panel-section notifications' }, el('h3', { textContent: 'Notifications on this device' }));
  const say = (text) => section.append(el('p', { className: 'meta', textContent: text }));
  if (!pushable()) {
    say('This browser cannot show notifications from a web app (on an iPhone, add Chorus to the home screen first).');
    return section;
  }
  if (!state.vapid) {
    say('This server does not send notifications.');
    return section;
  }
  const on = Notification.permission === 'granted' && await pushSubscription().catch(() => null);
  say(on ? 'On: private messages and work given to you arrive here while Chorus is closed.'
    : 'Off: turn them on to hear of private messages and work given to you while Chorus is closed.');
  const button = el('button', { type: 'button', textContent: on ? 'Turn off' : 'Turn on' });
  button.onclick = on ? turnOffPush : turnOnPush;
  section.append(button);
  if (views.pushStatus) section.append(el('p', { className: 'status', role: 'status', textContent: views.pushStatus }));
  return section;
}

/// What is the person's to do, across their rooms.
async function mePage() {
  const { account, rooms, profile, tokens } = await api('/api/v1/me');
  if (views.editing === 'profile') return [profileForm(profile)];
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
    profileSection(profile),
    tokensSection(tokens || []),
    dataSection(account),
    await notificationsSection(),
  ];
}

function profileSection(profile) {
  const name = [profile.firstName, profile.lastName].filter(Boolean).join(' ');
  const edit = actButton('Edit', '!profile set', 'link', () => { views.editing = 'profile'; renderJobs(); });
  return el('section', { className: 'panel-section profile' }, el('h3', { textContent: 'Profile' }),
    el('p', {}, name || 'No name given'), el('p', { className: 'meta', textContent: `${profile.email || 'No email'} · member since ${when(profile.since)}` }), edit);
}

/// The names and email to change: each one changed is its own `!profile set` (an empty one clears it).
function profileForm(profile) {
  const field = (label, input) => el('label', {}, label, input);
  const first = el('input', { value: profile.firstName || '', maxLength: 50, autocomplete: 'given-name' });
  const last = el('input', { value: profile.lastName || '', maxLength: 50, autocomplete: 'family-name' });
  const email = el('input', { type: 'email', value: profile.email || '', autocomplete: 'email' });
  const done = () => { views.editing = null; renderJobs(); };
  const form = el('form', { className: 'job-form profile-form' }, el('h2', { textContent: 'Your profile' }),
    field('First name', first), field('Last name', last), field('Email (only you see it)', email),
    el('div', { className: 'buttons' }, el('button', { type: 'submit', textContent: 'Save' }),
      el('button', { type: 'button', className: 'secondary', textContent: 'Cancel', onclick: done })));
  form.onsubmit = (event) => {
    event.preventDefault();
    for (const [word, input, was] of [['first', first, profile.firstName], ['last', last, profile.lastName], ['email', email, profile.email]]) {
      if (input.value.trim() !== (was || '')) act(`!profile set ${word} ${input.value.trim()}`.trim());
    }
    done();
  };
  setTimeout(() => first.focus(), 0);
  return form;
}

/// The account's tokens (its devices' logins and its bots'), each revocable but this device's own:
/// Log out ends that one.
function tokensSection(tokens) {
  const saved = loadSaved();
  const mine = saved && saved.tokenId;
  const items = tokens.map((t) => el('li', {}, `${t.label} — made ${when(t.createdAt)}`
    + (t.lastUsedAt ? `, last used ${when(t.lastUsedAt)}` : ', never used'), ' ',
    String(t.id) === String(mine) ? el('span', { className: 'meta', textContent: '(this device)' }) : actButton('Revoke', `!token revoke ${t.id}`, 'link')));
  return el('section', { className: 'panel-section tokens' }, el('h3', { textContent: 'Logins and tokens' }),
    items.length ? el('ul', { className: 'entries' }, ...items) : el('p', { className: 'meta', textContent: 'No tokens.' }));
}

/// Everything the server holds of the account, as one JSON file (what `!profile export` links to).
function dataSection(account) {
  const status = el('p', { className: 'meta', role: 'status' });
  const download = el('button', { type: 'button', className: 'link', textContent: 'Download my data' });
  download.onclick = async () => {
    const saved = loadSaved();
    const answer = await fetch('/api/v1/me/export', { headers: { Authorization: `Bearer ${saved && saved.token}` } }).catch(() => null);
    if (!answer || !answer.ok) { status.textContent = `Not downloaded: ${answer ? `the server answered ${answer.status}` : 'no connection'}.`; return; }
    const url = URL.createObjectURL(await answer.blob());
    const link = el('a', { href: url, download: `chorus-${account}.json` });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
    status.textContent = 'Downloaded.';
  };
  return el('section', { className: 'panel-section my-data' }, el('h3', { textContent: 'My data' }),
    el('p', { className: 'meta', textContent: 'Everything this server holds of your account, as one JSON file.' }), download, status);
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
