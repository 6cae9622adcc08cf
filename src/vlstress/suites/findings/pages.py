"""The robustness cards' HTML, as jinja2 templates (`cards` renders them): kept in a module so
that the cards step depends on them as on its code (an edit reruns it)."""

# what both pages start with: the provenance a reader sees without opening the JSON
HEAD = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="vlstress {{ version }}">
<meta name="vlstress-summary-sha256" content="{{ summary_sha256 }}">
"""

CARD = (
    HEAD
    + r"""<title>{{ card.model.label }}: robustness card</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 72em; padding: 0 1em; color: #222; line-height: 1.4; }
h1 { margin-bottom: 0.2em; }
h2 { margin-top: 1.6em; border-bottom: 1px solid #ddd; }
h3 { margin: 1.2em 0 0.4em; font-size: 1.05em; }
.badge { display: inline-block; white-space: nowrap; padding: 0.1em 0.6em; border-radius: 0.8em; font-size: 0.85em; font-weight: 600; vertical-align: middle; }
.badge.random { background: #b3261e; color: #fff; }
.badge.random-base { background: #f4c7c3; color: #5f1410; }
.badge.kind { background: #e8eaed; color: #333; }
dl.model { display: grid; grid-template-columns: max-content auto; gap: 0.15em 1.2em; }
dl.model dt { color: #555; }
dl.model dd { margin: 0; }
.caveats { background: #fff8e1; border-left: 4px solid #f9a825; padding: 0.6em 1em; }
.caveats li { margin: 0.2em 0; }
table { border-collapse: collapse; width: 100%; font-size: 0.92em; }
th, td { padding: 0.25em 0.6em; border-bottom: 1px solid #eee; text-align: left; vertical-align: top; }
th { background: #f5f5f5; }
table.headlines { table-layout: fixed; }
table.headlines col.set { width: 11%; } table.headlines col.condition { width: 16%; }
table.headlines col.metric { width: 16%; } table.headlines col.value { width: 6%; }
table.headlines col.interval { width: 14%; } table.headlines col.n { width: 8%; }
table.headlines col.standing { width: 15%; } table.headlines col.published { width: 8%; }
table.headlines col.record { width: 6%; }
td { overflow-wrap: anywhere; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.small-n { color: #b3261e; }
.muted { color: #777; font-size: 0.9em; }
figure { margin: 1em 0; }
figure img { max-width: 100%; height: auto; }
footer { margin-top: 3em; color: #777; font-size: 0.85em; border-top: 1px solid #ddd; padding-top: 0.5em; }
code { font-size: 0.95em; }
</style>
</head>
<body>
<p class="muted"><a href="index.html">← all models</a></p>
<h1>{{ card.model.label }}
{% if card.model.weights_kind == "random-init" %}<span class="badge random" title="untrained weights">random-init</span>{% endif %}
{% if card.model.random_base %}<span class="badge random-base" title="fine-tuned from {{ card.model.random_base }}">fine-tuned from a random-init base</span>{% endif %}
</h1>
<p class="muted">model <code>{{ card.model.slug }}</code>, one of the run's {{ card.n_models }} models</p>

<dl class="model">
<dt>architecture</dt><dd>{{ card.model.arch }}</dd>
<dt>weights</dt><dd>{{ card.model.weights }}{% if card.model.weights_kind %} <span class="badge kind">{{ card.model.weights_kind }}</span>{% endif %}</dd>
{% for name, value in card.model.attributes %}
<dt>{{ name }}</dt><dd>{{ value }}</dd>
{% endfor %}
</dl>

<h2>Caveats</h2>
{% if card.caveats %}
<ul class="caveats" id="caveats">
{% for text in card.caveats %}
<li>{{ text }}</li>
{% endfor %}
</ul>
{% else %}
<p id="caveats">None found.</p>
{% endif %}

<h2>Headline numbers</h2>
{% if card.groups %}
<p class="muted">Values in percent. Interval: {{ confidence }}% Wilson score interval for proportions, over the items counted (n); the other metrics have none until the per-item outcomes are kept. Standing: the share of the run's other models on the same row that this one does at least as well as (in the metric's direction), in percent. Item counts below {{ small_n }} are in red.</p>
{% for title, rows in card.groups %}
<h3>{{ title }}</h3>
<table class="headlines">
<colgroup>{% for name in ["set", "condition", "metric", "value", "interval", "n", "standing", "published", "record"] %}<col class="{{ name }}">{% endfor %}</colgroup>
<thead><tr><th>set</th><th>condition</th><th>metric</th><th>value</th><th>{{ confidence }}% interval</th><th>n</th><th>standing</th><th>published</th><th>record</th></tr></thead>
<tbody>
{% for row in rows %}
<tr>
<td>{{ row.dataset }}</td><td>{{ row.condition }}</td><td>{{ row.metric }}</td>
<td class="num">{{ row.value }}</td>
<td class="num">{{ row.interval }}</td>
<td class="num{% if row.small %} small-n{% endif %}">{{ row.n }}{% if row.seeds > 1 %} × {{ row.seeds }} seeds{% endif %}</td>
<td class="num">{{ row.standing }}</td>
<td class="num">{{ row.published or "" }}</td>
<td>{% for url in row.records %}<a class="record" href="{{ url }}">{% if row.records|length > 1 %}{{ loop.index }}{% else %}record{% endif %}</a>{% if not loop.last %} {% endif %}{% endfor %}</td>
</tr>
{% endfor %}
</tbody>
</table>
{% endfor %}
{% else %}
<p>No headline numbers for this model in this run.</p>
{% endif %}

{% if card.figure %}
<h2>Against the run's models</h2>
<figure>
<img src="{{ card.figure }}" alt="Each headline number of {{ card.model.label }} with its interval, against the run's other models">
<figcaption class="muted">Each headline number of this model (blue, with its {{ confidence }}% interval where one is defined) and the run's other models on the same row (grey); n: items behind each number.</figcaption>
</figure>
{% endif %}

<footer>
vlstress {{ version }} · summary sha256 <code>{{ summary_sha256 }}</code> · confidence {{ confidence }}%
</footer>
<script type="application/json" id="provenance">{{ provenance }}</script>
</body>
</html>
"""
)

INDEX = (
    HEAD
    + r"""<title>Robustness cards: the run's models</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em 1em; color: #222; line-height: 1.4; }
.muted { color: #777; font-size: 0.9em; }
.badge { display: inline-block; white-space: nowrap; padding: 0.05em 0.5em; border-radius: 0.8em; font-size: 0.8em; font-weight: 600; }
.badge.random { background: #b3261e; color: #fff; }
.badge.random-base { background: #f4c7c3; color: #5f1410; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.88em; }
th, td { padding: 0.3em 0.6em; border-bottom: 1px solid #eee; text-align: left; vertical-align: top; }
th { background: #f5f5f5; cursor: pointer; user-select: none; font-weight: 600; min-width: 6em; }
th .how { display: block; font-weight: normal; color: #777; font-size: 0.85em; }
th[aria-sort="ascending"]::after { content: " ▲"; }
th[aria-sort="descending"]::after { content: " ▼"; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.num small { display: block; color: #777; }
footer { margin-top: 3em; color: #777; font-size: 0.85em; border-top: 1px solid #ddd; padding-top: 0.5em; }
</style>
</head>
<body>
<h1>Robustness cards</h1>
<p class="muted">{{ models|length }} models. Values in percent; under each: its {{ confidence }}% interval (Wilson, proportions only) where the column is a single set and condition, else how many sets × conditions the mean is over; hover a cell for every number behind it. Click a header to sort (best first for a metric; click again to reverse); empty cells stay last.</p>
<div class="scroll">
<table class="sortable" id="models">
<thead><tr>
<th data-type="text" data-better="low">model</th>
<th data-type="text" data-better="low">architecture</th>
<th data-type="text" data-better="low">weights</th>
{% for column in columns %}
<th data-type="number" data-better="{{ column.better }}" title="{{ column.title }}: {{ column.metric }} ({{ column.how }}; {{ 'higher' if column.better == 'high' else 'lower' }} is better)">{{ column.title }}<span class="how">{{ column.metric }}, {{ column.how }}</span></th>
{% endfor %}
</tr></thead>
<tbody>
{% for model in models %}
<tr>
<td data-value="{{ model.label }}"><a href="{{ model.page|urlencode }}">{{ model.label }}</a></td>
<td data-value="{{ model.arch }}">{{ model.arch }}</td>
<td data-value="{{ model.weights_kind }}">{{ model.weights_kind }}{% if model.weights_kind == "random-init" %} <span class="badge random">random-init</span>{% endif %}{% if model.random_base %} <span class="badge random-base">random-init base</span>{% endif %}</td>
{% for column in columns %}
{% set cell = column.cells.get(model.slug) %}
{% if cell %}
<td class="num" data-value="{{ cell.value }}" title="{{ cell.tip }}">{{ cell.text }}<small>{{ cell.small }}</small></td>
{% else %}
<td class="num" data-value=""></td>
{% endif %}
{% endfor %}
</tr>
{% endfor %}
</tbody>
</table>
</div>
<footer>
vlstress {{ version }} · summary sha256 <code>{{ summary_sha256 }}</code> · confidence {{ confidence }}%
</footer>
<script type="application/json" id="provenance">{{ provenance }}</script>
<script>
(function () {
  "use strict";
  function key(cell, numeric) {
    var raw = cell.getAttribute("data-value");
    if (raw === null || raw === "") { return null; }
    if (!numeric) { return raw.toLowerCase(); }
    var value = parseFloat(raw);
    return isNaN(value) ? null : value;
  }
  function sortBy(table, th, column) {
    var numeric = th.getAttribute("data-type") === "number";
    var best = th.getAttribute("data-better") === "high" ? "descending" : "ascending";
    var current = th.getAttribute("aria-sort");
    var order = current === null ? best : (current === "ascending" ? "descending" : "ascending");
    var sign = order === "ascending" ? 1 : -1;
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows).map(function (row, i) {
      return { row: row, key: key(row.cells[column], numeric), i: i };
    });
    rows.sort(function (a, b) {
      if (a.key === null || b.key === null) {  // empty cells last, whatever the order
        return (a.key === null) - (b.key === null) || a.i - b.i;
      }
      if (a.key < b.key) { return -sign; }
      if (a.key > b.key) { return sign; }
      return a.i - b.i;
    });
    rows.forEach(function (item) { body.appendChild(item.row); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (cell) {
      cell.removeAttribute("aria-sort");
    });
    th.setAttribute("aria-sort", order);
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, column) {
      th.addEventListener("click", function () { sortBy(table, th, column); });
    });
  });
}());
</script>
</body>
</html>
"""
)
