// The rating screen's keys and posts. Grades go out as JSON with the invite's anti-forgery
// value in a header (evalplat/rating/app.py); every grade is saved before the screen moves on.
(function () {
  "use strict";
  const body = document.body;

  function post(url, payload) {
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-Evalplat-CSRF": body.dataset.csrf },
      body: JSON.stringify(payload),
    }).then(function (response) {
      return response.json().then(function (data) {
        if (!response.ok) { throw new Error(data.error || ("HTTP " + response.status)); }
        return data;
      });
    });
  }

  function setupRating() {
    const d = body.dataset;
    const low = Number(d.low), high = Number(d.high);
    const note = document.getElementById("note");
    const status = document.getElementById("status");
    const judge = document.getElementById("judge");
    let busy = false;

    function mark(selector) {
      document.querySelectorAll("button.grade").forEach(function (b) { b.classList.remove("chosen"); });
      const chosen = document.querySelector(selector);
      if (chosen) { chosen.classList.add("chosen"); }
    }

    function go(url) { if (url) { window.location.assign(url); } }

    function send(grade, unsure, advance) {
      if (busy) { return; }
      busy = true;
      status.textContent = "saving…";
      post(d.gradeUrl, { grade: grade, unsure: unsure, note: note.value })
        .then(function (data) {
          status.textContent = "saved: " + (unsure ? "unsure" : grade);
          mark(unsure ? "button[data-unsure]" : "button[data-grade='" + grade + "']");
          d.saved = "yes";
          if (d.judge && data.judge_grade !== null) {
            judge.textContent = "the judge said " + data.judge_grade + " (→ next)";
            busy = false;
            return;
          }
          if (advance) { go(d.nextUrl); return; }
          busy = false;
        })
        .catch(function (error) { status.textContent = "not saved: " + error.message; busy = false; });
    }

    document.querySelectorAll("button.grade").forEach(function (button) {
      button.addEventListener("click", function () {
        if (button.dataset.unsure) { send(null, true, true); } else { send(Number(button.dataset.grade), false, true); }
      });
    });

    note.addEventListener("keydown", function (event) {
      if (event.key === "Escape") { note.blur(); event.preventDefault(); }
      if (event.key === "Enter" && !event.shiftKey) {
        event.preventDefault();
        note.blur();
        const chosen = document.querySelector("button.grade.chosen");
        if (chosen) {
          if (chosen.dataset.unsure) { send(null, true, false); } else { send(Number(chosen.dataset.grade), false, false); }
        } else {
          status.textContent = "the note goes with the grade you give";
        }
      }
    });

    document.addEventListener("keydown", function (event) {
      if (event.target === note || event.ctrlKey || event.metaKey || event.altKey) { return; }
      const key = event.key;
      if (/^[0-9]$/.test(key) && Number(key) >= low && Number(key) <= high) {
        event.preventDefault(); send(Number(key), false, true);
      } else if (key === "u") {
        event.preventDefault(); send(null, true, true);
      } else if (key === "n") {
        event.preventDefault(); note.focus();
      } else if (key === "ArrowRight" || key === "j") {
        event.preventDefault(); go(d.nextUrl);
      } else if ((key === "ArrowLeft" || key === "k") && d.prevUrl) {
        event.preventDefault(); go(d.prevUrl);
      }
    });
  }

  function setupSettle() {
    document.querySelectorAll("button.settle").forEach(function (button) {
      button.addEventListener("click", function () {
        const cell = button.parentElement;
        post(cell.dataset.settleUrl, { grade: Number(button.dataset.grade) }).then(function () {
          cell.querySelectorAll("button").forEach(function (b) { b.classList.remove("chosen"); });
          button.classList.add("chosen");
        });
      });
    });
  }

  if (body.id === "rate") { setupRating(); }
  if (body.id === "settle") { setupSettle(); }
})();
