// Chorus's service worker: the page's own files, kept so that the app opens without a network and
// shows what it last knew (the page keeps each conversation's last lines on the device). Network
// first, so a new version of the page is used as soon as the server has it. And the notifications
// the server pushes while the page is closed (soju.im/webpush): each push is one IRC line.
'use strict';

const CACHE = 'chorus-shell';
const SHELL = ['/', '/irc.js', '/chat.js', '/jobs.js', '/team.js', '/app.js', '/app.css', '/icon.svg', '/client.json', '/manifest.webmanifest'];

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(SHELL)).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  const path = url.pathname === '/index.html' ? '/' : url.pathname;
  // The API, the socket, photos and reports are the server's to answer, never an old copy.
  if (event.request.method !== 'GET' || url.origin !== self.location.origin || !SHELL.includes(path)) return;
  event.respondWith(fetch(event.request).then((answer) => {
    if (answer.ok) {
      const copy = answer.clone();
      event.waitUntil(caches.open(CACHE).then((cache) => cache.put(path, copy)));
    }
    return answer;
  }).catch(() => caches.match(path).then((kept) => kept || Response.error())));
});

/// A pushed IRC line as a notification: who says what, where. The server pushes only while none of
/// the account's connections is open, so each one is shown.
function notificationOf(line) {
  let rest = line.trim();
  const tags = {};
  if (rest.startsWith('@')) {
    const end = rest.indexOf(' ');
    for (const pair of rest.slice(1, end).split(';')) {
      const eq = pair.indexOf('=');
      tags[eq < 0 ? pair : pair.slice(0, eq)] = eq < 0 ? '' : pair.slice(eq + 1).replace(/\\s/g, ' ').replace(/\\:/g, ';').replace(/\\\\/g, '\\');
    }
    rest = rest.slice(end + 1);
  }
  let nick = '';
  if (rest.startsWith(':')) {
    const end = rest.indexOf(' ');
    nick = rest.slice(1, end).split('!')[0];
    rest = rest.slice(end + 1);
  }
  const colon = rest.indexOf(' :');
  const words = (colon < 0 ? rest : rest.slice(0, colon)).split(' ');
  const text = colon < 0 ? '' : rest.slice(colon + 2);
  const [command, target = ''] = words;
  if (command !== 'PRIVMSG' && command !== 'NOTICE') return { title: 'Chorus', body: 'Something new is waiting for you.', tag: 'chorus', target: '' };
  const room = target.startsWith('#') ? target : tags['chorus/room'] || '';
  return {
    title: room && nick !== 'Chorus' ? `${nick} in ${room}` : nick || 'Chorus',
    body: text.replace(/^\u0001ACTION (.*)\u0001$/, `${nick} $1`),
    tag: tags.msgid || `${nick}:${text}`,
    target: room || nick,
    job: room ? tags['chorus/job'] || '' : '',  // an event about a room's job opens that job's page
  };
}

self.addEventListener('push', (event) => {
  const note = notificationOf(event.data ? event.data.text() : '');
  event.waitUntil(self.registration.showNotification(note.title, { body: note.body, tag: note.tag, icon: '/icon.svg',
    data: { target: note.target, job: note.job } }));
});

// A tap opens the conversation: in the app's window if one is open, else in a new one.
self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const { target = '', job = '' } = event.notification.data || {};
  event.waitUntil(self.clients.matchAll({ type: 'window', includeUncontrolled: true }).then((windows) => {
    for (const window of windows) {
      window.postMessage({ open: target, job });
      if ('focus' in window) return window.focus();
    }
    return self.clients.openWindow(target ? `/#${encodeURIComponent(target)}${job ? `/${job}` : ''}` : '/');
  }));
});
