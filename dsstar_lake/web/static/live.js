// Follow a running run: /runs/<id>/events sends the page's parts as they change (server-sent events);
// each replaces the element of the same id, or is appended to its container. Without JavaScript the page
// reloads itself instead (a meta refresh inside <noscript>).
"use strict";
(function () {
  const live = document.getElementById("live");
  if (!live || !live.dataset.events || !window.EventSource) {
    return;
  }
  const source = new EventSource(live.dataset.events);
  source.addEventListener("part", function (event) {
    const part = JSON.parse(event.data);
    const template = document.createElement("template");
    template.innerHTML = part.html;  // rendered by the server's templates, every value escaped there
    const fresh = template.content.firstElementChild;
    const old = document.getElementById(part.id);
    if (old) {
      if (!part.keep) {  // a prompt box is never replaced: the person may be typing in it
        old.replaceWith(fresh);
      }
    } else if (part.into && document.getElementById(part.into)) {
      document.getElementById(part.into).append(fresh);
    }
  });
  source.addEventListener("gone", function (event) {
    const old = document.getElementById(JSON.parse(event.data).id);
    if (old) {
      old.remove();
    }
  });
  source.addEventListener("end", function () {
    source.close();  // the run stopped: no reconnecting
    live.removeAttribute("data-events");
  });
})();
