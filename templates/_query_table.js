(function () {
  "use strict";
  var blob = document.getElementById("query-data");
  var table = document.getElementById("query-table");
  if (!blob || !table) { return; }
  var data = JSON.parse(blob.textContent);
  var cols = data.columns, rows = data.rows, size = data.page_size;
  var keys = cols.map(function (c) { return c.key; });
  var sortAt = keys.indexOf(data.sort), descending = data.descending, page = 0, view = rows;
  var text = document.getElementById("q-filter"), move = document.getElementById("q-move");
  var moveAt = move ? keys.indexOf(move.getAttribute("data-key")) : -1;
{% if table.segments %}
  var segment = document.getElementById("q-segment"), tagsOf = data.tags || {};
{% endif %}
  var status = document.getElementById("q-status");
  var prev = document.getElementById("q-prev"), next = document.getElementById("q-next");
  document.getElementById("q-controls").hidden = false;

  function judge(v, hib) {
    if (v === null || Math.abs(v) < 1e-12) { return "same"; }
    return (v > 0) === hib ? "better" : "worse";
  }
  function cell(v, col) {
    var td = document.createElement("td");
    if (col.kind === "id" || col.kind === "text") {
      td.className = col.kind;
      td.textContent = v === null ? "" : String(v);
      return td;
    }
    td.className = "num" + (col.key.charAt(0) === "b" ? " first" : "");
    if (v === null) { td.textContent = "\u2013"; return td; }
    if (col.kind === "delta") {
      var span = document.createElement("span"), how = judge(v, col.hib);
      span.className = how;
      span.textContent = { better: "\u25b2", worse: "\u25bc", same: "=" }[how] + " " +
        (v > 0 ? "+" : v < 0 ? "\u2212" : "") + Math.abs(v).toFixed(4);
      td.appendChild(span);
    } else if (col.kind === "int") {
      td.textContent = String(Math.round(v));
    } else if (col.kind === "ms") {
      td.textContent = v.toFixed(1);
    } else {
      td.textContent = Math.abs(v) >= 100 && Number.isInteger(v) ? String(v) : v.toFixed(4);
    }
    return td;
  }
  // Text with digits sorts as people count: 1, 2, 10, 100 and q2 before q10. Same rule as
  // natural_key in evalplat/reports/data.py, so the first page and later sorts agree.
  function natural(x, y) {
    var a = String(x).match(/\d+|\D+/g) || [], b = String(y).match(/\d+|\D+/g) || [];
    for (var i = 0; i < Math.min(a.length, b.length); i++) {
      var p = a[i], q = b[i], pd = /^\d/.test(p), qd = /^\d/.test(q);
      if (pd !== qd) { return pd ? -1 : 1; }
      if (pd) {
        p = p.replace(/^0+/, ""); q = q.replace(/^0+/, "");
        if (p.length !== q.length) { return p.length - q.length; }
      }
      if (p !== q) { return p < q ? -1 : 1; }
    }
    if (a.length !== b.length) { return a.length - b.length; }
    return String(x) < String(y) ? -1 : (String(x) > String(y) ? 1 : 0);
  }
  function compare(a, b) {
    var x = a[sortAt], y = b[sortAt];
    if (x === null || y === null) { return x === y ? 0 : (x === null ? 1 : -1); }
    var order = typeof x === "string" ? natural(x, y) : x - y;
    if (order === 0) { return natural(a[0], b[0]); }
    return descending ? -order : order;
  }
  function apply() {
    var needle = text ? text.value.trim().toLowerCase() : "";
    var which = move ? move.value : "all";
    view = rows.filter(function (row) {
      if (needle && String(row[0]).toLowerCase().indexOf(needle) < 0 &&
          String(row[1]).toLowerCase().indexOf(needle) < 0) { return false; }
{% if table.segments %}
      if (segment.value && (tagsOf[row[0]] || []).indexOf(segment.value) < 0) { return false; }
{% endif %}
      return which === "all" || judge(row[moveAt], cols[moveAt].hib) === which;
    });
    view.sort(compare);
    page = 0;
    draw();
  }
  function draw() {
    var pages = Math.max(1, Math.ceil(view.length / size));
    page = Math.min(page, pages - 1);
    var body = document.createElement("tbody");
    view.slice(page * size, page * size + size).forEach(function (row) {
      var tr = document.createElement("tr");
      row.forEach(function (v, i) { tr.appendChild(cell(v, cols[i])); });
      body.appendChild(tr);
    });
    table.replaceChild(body, table.tBodies[0]);
    var first = view.length ? page * size + 1 : 0;
    status.textContent = first + "\u2013" + Math.min(view.length, (page + 1) * size) +
      " of " + view.length + " queries (" + rows.length + " in all)";
    prev.disabled = page === 0;
    next.disabled = page >= pages - 1;
    table.querySelectorAll("th[data-key]").forEach(function (th) {
      if (th.getAttribute("data-key") === keys[sortAt]) {
        th.setAttribute("aria-sort", descending ? "descending" : "ascending");
      } else {
        th.removeAttribute("aria-sort");
      }
    });
  }
  table.querySelectorAll("th[data-key] button.sort").forEach(function (button) {
    button.addEventListener("click", function () {
      var at = keys.indexOf(button.parentNode.getAttribute("data-key"));
      descending = at === sortAt ? !descending : false;
      sortAt = at;
      apply();
    });
  });
  if (text) { text.addEventListener("input", apply); }
  if (move) { move.addEventListener("change", apply); }
{% if table.segments %}
  segment.addEventListener("change", apply);
{% endif %}
  prev.addEventListener("click", function () { page -= 1; draw(); });
  next.addEventListener("click", function () { page += 1; draw(); });
  apply();
})();
