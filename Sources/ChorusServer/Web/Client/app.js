// Chorus in a browser, 5 of 5: photos, the login and app screens, and the start.
'use strict';

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
    tab.onclick = () => { views.job = null; views.request = null; views.editing = null; views.form = false; views.status = ''; showView(tab.dataset.view); };
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
  if ('serviceWorker' in navigator) {
    navigator.serviceWorker.register('/sw.js').catch(() => {});
    // A notification tapped while the app is open names the conversation to show.
    navigator.serviceWorker.addEventListener('message', (event) => {
      if (event.data && event.data.open) openConversation(event.data.open, event.data.job);
    });
  }

  const saved = loadSaved();
  if (saved && saved.token) {
    state.credentials = { account: saved.account, secret: saved.token };
    state.mode = 'login';
    showApp();
    connect();
    // A notification tapped while the app was closed opened it at /#<conversation>[/<job>].
    if (location.hash.length > 1) {
      const [target, job] = location.hash.slice(1).split('/');
      openConversation(decodeURIComponent(target), job);
      history.replaceState(null, '', '/');
    }
  } else showLogin();
}

/// Shows what a notification named: a room once it is joined (on the page of the job its event was
/// about, if any), a person's conversation at once.
function openConversation(target, job) {
  if (isRoom(target)) {
    const room = state.conversations.get(fold(target));
    if (room && room.joined) {
      select(room);
      if (Number(job) > 0) openJob(Number(job));
    } else {
      state.joining = fold(target);
      if (Number(job) > 0) state.openingJob = Number(job);
    }
  } else if (target) select(conversation(target));
}

boot();
