// Chorus's service worker: the page's own files, kept so that the app opens without a network and
// shows what it last knew (the page keeps each conversation's last lines on the device). Network
// first, so a new version of the page is used as soon as the server has it.
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
