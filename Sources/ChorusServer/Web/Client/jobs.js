// Chorus in a browser, 3 of 5: the views beside the chat, and a room's Jobs.
'use strict';

// ---- The Jobs view: a room's jobs as the API reads them (never the chat's English); every change
// is the !command a keyboard user would type, sent to the room, so the rules live in one place.

const JOB_FILTERS = [['Open', { status: 'open' }], ['Mine', { status: 'open', assignee: 'me' }], ['Done', { status: 'completed' }], ['All', {}]];
const views = { view: 'chat', filter: 'Open', job: null, form: false, refresh: null, status: '', request: null, scope: 'mine', editing: null, pushStatus: '' };

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
  if (views.view === 'chat' || views.form || views.editing || !state.current) return;
  // A room's views follow that room's events; Chorus's own views follow whatever concerns the person.
  if (isRoom(state.current.name) ? fold(room || '') !== state.current.key : state.current.key !== fold(state.bot)) return;
  clearTimeout(views.refresh);
  views.refresh = setTimeout(renderJobs, 150);
}

/// A button that sends `command` from a view (or runs `run` instead), named by its command for tests.
function actButton(label, command, className = '', run = null) {
  const b = el('button', { type: 'button', textContent: label, className });
  if (command) b.dataset.command = command;
  if (run || command) b.onclick = run || (() => act(command));
  return b;
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
  const [{ job, comments, activity }, me] = await Promise.all([api(`/api/v1/jobs/${id}`), api('/api/v1/me')]);
  if (views.editing === id) return [jobEditForm(job)];
  const manager = me.rooms.some((room) => fold(room.name) === c.key && room.role === 'manager');
  const back = el('button', { type: 'button', className: 'link', textContent: '‹ All jobs' });
  back.onclick = () => { views.job = null; renderJobs(); };
  const mine = job.assignee && fold(job.assignee) === fold(state.account);
  const isOpen = ['created', 'assigned', 'in-progress'].includes(job.status);
  const buttons = el('div', { className: 'buttons' });
  const button = (label, command, run = null) => buttons.append(actButton(label, command, '', run));
  if (mine && (job.status === 'created' || job.status === 'assigned')) button('Start', `!start ${id}`);
  if (mine && isOpen) button('Done', `!done ${id}`);
  if (!job.assignee && isOpen) button('Take it', `!assign ${id} ${state.account}`);
  if (isOpen) button('Add a photo', `!photo ${id}`, () => pickPhoto(`!photo ${id}`));
  if (!isOpen) button('Reopen', `!reopen ${id}`);
  if (manager || fold(job.creator) === fold(state.account)) button('Edit', `!edit ${id}`, () => { views.editing = id; renderJobs(); });

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

/// A job's fields to change: each one changed is its own `!edit` (or `!assign`, `!unassign`).
function jobEditForm(job) {
  const field = (label, input) => el('label', {}, label, input);
  const local = (iso) => { const d = new Date(iso); d.setMinutes(d.getMinutes() - d.getTimezoneOffset()); return d.toISOString().slice(0, 16); };
  const title = el('input', { required: true, maxLength: 200, value: job.title });
  const assignee = el('input', { value: job.assignee || '', placeholder: 'nobody', autocapitalize: 'none', spellcheck: false });
  const due = el('input', { type: 'datetime-local', value: job.due ? local(job.due) : '' });
  const description = el('input', { value: job.description || '' });
  const done = () => { views.editing = null; renderJobs(); };
  const form = el('form', { className: 'job-form' },
    el('h2', { textContent: `Edit job ${job.id}` }),
    field('What needs doing', title), field('Who does it', assignee), field('Due', due), field('Details', description),
    el('div', { className: 'buttons' }, el('button', { type: 'submit', textContent: 'Save' }),
      el('button', { type: 'button', className: 'secondary', textContent: 'Cancel', onclick: done })));
  form.onsubmit = (event) => {
    event.preventDefault();
    const id = job.id;
    const who = assignee.value.trim().replace(/^@/, '');
    if (title.value.trim() && title.value.trim() !== job.title) act(`!edit ${id} title ${title.value.trim()}`);
    if (description.value.trim() && description.value.trim() !== (job.description || '')) act(`!edit ${id} description ${description.value.trim()}`);
    if (due.value !== (job.due ? local(job.due) : '')) act(`!edit ${id} due ${due.value ? due.value.replace('T', ' ') : 'none'}`);
    if (fold(who) !== fold(job.assignee || '')) act(who ? `!assign ${id} ${who}` : `!unassign ${id}`);
    done();
  };
  return form;
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
