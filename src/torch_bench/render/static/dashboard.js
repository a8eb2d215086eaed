// torch-bench dashboard. Vanilla JavaScript, no build step.
//
// Contract with the Python side (src/torch_bench/render/paths.py and data.py): this script
// never builds a path; it fetches only the URLs written into the pages (data-* attributes)
// and into the data files ("file" fields). Text from users or git is only ever inserted with
// textContent, or escaped before it reaches Plotly's hover labels (the training page).
//
// Charts: the server draws every chart a page opens with, axes included (render/svg_chart.py).
// The interaction on a benchmark's chart (hover values, commit links, zoom, filters,
// overlays) is this script's own small layer over that markup rather than a chart library:
// Plotly, the one the training page uses, is 1.2 MB of script whose parsing and first plot
// kept the main thread busy for 0.3-0.6 s exactly when the reader reached for the chart.
// Here only the series' JSON is fetched, in idle time after the first paint.
"use strict";

(function () {
  const HTTP_URL = /^https?:\/\//;

  function escapeText(value) {
    return String(value == null ? "" : value)
      .replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }

  async function fetchJSON(url) {
    const response = await fetch(url);
    if (!response.ok) throw new Error(url + ": HTTP " + response.status);
    return response.json();
  }

  function showProblem(element, message) {
    const p = document.createElement("p");
    p.className = "empty";
    p.textContent = message;
    element.replaceChildren(p);
  }

  function theme() {
    const css = getComputedStyle(document.documentElement);
    const v = (name) => css.getPropertyValue(name).trim();
    return { fg: v("--fg"), muted: v("--muted"), line: v("--line"), link: v("--link"),
             worse: v("--worse"), better: v("--better"), accent: v("--accent"), bg: v("--bg") };
  }

  function baseLayout(extra) {
    const t = theme();
    const axis = { gridcolor: t.line, linecolor: t.line, zerolinecolor: t.line, automargin: true };
    return Object.assign({
      paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)",
      font: { color: t.fg, size: 12 }, margin: { l: 60, r: 20, t: 20, b: 50 },
      hoverlabel: { align: "left" }, showlegend: false,
      xaxis: Object.assign({}, axis), yaxis: Object.assign({}, axis),
      legend: { orientation: "h", y: -0.2 },
    }, extra || {});
  }

  const PLOT_CONFIG = { responsive: true, displaylogo: false };

  function markRendered(element) {
    element.setAttribute("data-rendered", "1");
  }

  // -- rows filtered by selects (overview's recent runs) -------------------------------------
  function setupRowFilters() {
    document.querySelectorAll("select[data-row-filter]").forEach((select) => {
      const table = document.getElementById(select.dataset.target);
      const attribute = select.dataset.rowFilter;
      select.addEventListener("change", () => {
        table.querySelectorAll("tbody tr").forEach((row) => {
          row.hidden = select.value !== "" && row.dataset[attribute] !== select.value;
        });
      });
    });
  }

  // -- Trend charts with axes ------------------------------------------------------------------
  // Mirrors render/svg_chart.py and the `chart` macro of templates/macros.html: the server
  // draws the charts a page opens with; drawChart draws the same markup for the small
  // multiples (from their trend files) and whenever the reader zooms or filters a benchmark's
  // chart. The plot is an SVG stretched to its box (drawing coordinates 0..VIEW), the labels
  // HTML text around it, so no chart needs its size measured. Change both sides together.
  const SVG = "http://www.w3.org/2000/svg";
  const VIEW = 1000;
  const Y_TICKS = 5;
  const X_TICKS = 6;
  const MINOR_X_TICKS = [1, 3, 4];
  const MIN_RELATIVE_SPAN = 0.1;
  const PAD = 0.06;
  const ZERO_PULL = 0.3;
  const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  // metrics.DISPLAY_SCALES: (symbol, size in the stored unit), smallest first
  const DISPLAY_SCALES = {
    ms: [["ns", 1e-6], ["µs", 1e-3], ["ms", 1], ["s", 1e3]],
    MB: [["B", 1 / 1048576], ["KB", 1 / 1024], ["MB", 1], ["GB", 1024], ["TB", 1048576]],
  };

  function svgElement(name, attributes) {
    const element = document.createElementNS(SVG, name);
    Object.keys(attributes).forEach((key) => element.setAttribute(key, attributes[key]));
    return element;
  }

  function htmlElement(name, className, text) {
    const element = document.createElement(name);
    if (className) element.className = className;
    if (text != null) element.textContent = text;
    return element;
  }

  function niceStep(span, count) {
    const raw = span / Math.max(count - 1, 1);
    const power = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const factor of [1, 2, 2.5, 5, 10]) {
      if (raw <= factor * power * 1.0001) return factor * power;
    }
    return 10 * power;
  }

  function valueRange(values) {
    const every = values.filter((v) => v != null && isFinite(v));
    if (!every.length) return [0, 1];
    let low = Math.min.apply(null, every);
    let high = Math.max.apply(null, every);
    const level = (Math.abs(low) + Math.abs(high)) / 2;
    const span = Math.max(high - low, MIN_RELATIVE_SPAN * level) || 1;
    const middle = (low + high) / 2;
    low = middle - span * (0.5 + PAD);
    high = middle + span * (0.5 + PAD);
    if (Math.min.apply(null, every) >= 0 && low < ZERO_PULL * (high - low)) low = 0;
    return [low, high];
  }

  // [size in the stored unit, symbol]: render/units.py display_unit (the unit's own scale,
  // else SI prefixes; "" for bare numbers and ratios).
  const SI_PREFIXES = [["k", 1e3], ["M", 1e6], ["G", 1e9], ["T", 1e12], ["P", 1e15]];
  function displayUnit(largest, unit) {
    largest = Math.abs(largest);
    const scales = DISPLAY_SCALES[unit];
    if (scales) {
      if (largest === 0 || !isFinite(largest)) return [1, unit];
      const fitting = scales.filter((s) => largest >= s[1]);
      const chosen = fitting.length ? fitting[fitting.length - 1] : scales[0];
      return [chosen[1], chosen[0]];
    }
    if (unit === "ratio") return [1, ""];
    const bare = unit === "1" || unit === "count" ? "" : unit;
    const fitting = isFinite(largest) ? SI_PREFIXES.filter((p) => largest >= p[1]) : [];
    if (!fitting.length) return [1, bare];
    const [prefix, size] = fitting[fitting.length - 1];
    return [size, bare ? prefix + " " + bare : prefix];
  }

  function groupDigits(text) {
    const parts = text.split(".");
    parts[0] = parts[0].replace(/\B(?=(\d{3})+(?!\d))/g, ",");
    return parts.join(".");
  }

  // {low, high, ticks: [[value, label]], title}: as svg_chart.value_axis
  function valueAxis(values, unit, count) {
    let [low, high] = valueRange(values);
    const [size, symbol] = displayUnit(Math.max(Math.abs(low), Math.abs(high)), unit);
    low /= size;  // steps are round in the unit shown
    high /= size;
    const step = niceStep(high - low, count || Y_TICKS);
    low = Math.floor(low / step + 1e-9) * step;
    high = Math.ceil(high / step - 1e-9) * step;
    if (high <= low) high = low + step;
    let decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
    if ((step * Math.pow(10, decimals)) % 1 > 1e-6) decimals += 1;
    const ticks = [];
    const steps = Math.round((high - low) / step);
    for (let k = 0; k <= steps; k += 1) {
      const value = low + k * step;
      ticks.push([value * size, groupDigits(value.toFixed(decimals)).replace(/^-(0\.?0*)$/, "$1")]);
    }
    return { low: low * size, high: high * size, ticks: ticks, size: size,
             title: symbol === "1" || symbol === "count" ? "" : symbol };
  }

  function dateLabel(moment, withTime, withYear) {
    let text = MONTHS[moment.getUTCMonth()] + " " + moment.getUTCDate();
    if (withYear) text += " " + moment.getUTCFullYear();
    const two = (n) => (n < 10 ? "0" : "") + n;
    return text + (withTime ? " " + two(moment.getUTCHours()) + ":" + two(moment.getUTCMinutes()) : "");
  }

  function dateFormat(first, last) {
    return { time: last - first < 3 * 86400e3,
             year: new Date(first).getUTCFullYear() !== new Date(last).getUTCFullYear() };
  }

  // [position 0..1, label, minor] of points spread evenly in commit order: svg_chart.date_ticks
  function orderTicks(times, count) {
    const known = times.filter((t) => isFinite(t));
    if (!known.length) return [];
    const format = dateFormat(Math.min.apply(null, known), Math.max.apply(null, known));
    const last = times.length - 1;
    const slots = new Map();
    for (let k = 0; k < count; k += 1) {
      const i = last ? Math.round(k * last / (count - 1)) : 0;
      const minor = count === X_TICKS && MINOR_X_TICKS.includes(k);
      slots.set(i, (slots.has(i) ? slots.get(i) : true) && minor);
    }
    const ticks = [];
    slots.forEach((minor, i) => {
      if (!isFinite(times[i])) return;
      const label = dateLabel(new Date(times[i]), format.time, format.year);
      if (!ticks.length || ticks[ticks.length - 1][1] !== label) {
        ticks.push([last ? i / last : 0.5, label, minor]);
      }
    });
    return ticks;
  }

  // The same slots on a time axis from `first` to `last` (ms since the epoch).
  function timeTicks(first, last, count) {
    const format = dateFormat(first, last);
    const ticks = [];
    for (let k = 0; k < count; k += 1) {
      const label = dateLabel(new Date(first + k * (last - first) / (count - 1)), format.time, format.year);
      if (!ticks.length || ticks[ticks.length - 1][1] !== label) {
        ticks.push([last > first ? k / (count - 1) : 0.5, label, count === X_TICKS && MINOR_X_TICKS.includes(k)]);
      }
    }
    return ticks;
  }

  function rounded(value) {
    return String(Math.round(value * 10) / 10);
  }

  // spec: {lines: [{x: [0..1], y: [values], css}], unit, xTicks, band: [low, high] | null,
  //        spread: {q1, q3} (per point of the first line: its interquartile ribbon),
  //        bandFrom: 0..1, changePoints: [{x, y, css, label}], envLines: [{x, label}],
  //        log, yTicks (how many), dot (mark the newest point of the first line)}
  // Returns how values map to the plot: {low, high, log}.
  function drawChart(holder, spec) {
    const values = [];
    spec.lines.forEach((line) => line.y.forEach((v) => values.push(v)));
    const positive = values.filter((v) => v > 0);
    const log = Boolean(spec.log) && positive.length === values.length && values.length > 0;
    const axis = valueAxis(log ? values : values.concat(spec.band || []), spec.unit, spec.yTicks);
    let low = axis.low;
    let high = axis.high;
    let ticks = axis.ticks;
    if (log) {
      low = Math.log(Math.min.apply(null, positive) / 1.05);
      high = Math.log(Math.max.apply(null, positive) * 1.05);
      ticks = ticks.filter((t) => t[0] > 0 && Math.log(t[0]) >= low && Math.log(t[0]) <= high);
    }
    const scale = (v) => (log ? Math.log(v) : v);
    const y = (v) => VIEW - (scale(v) - low) / (high - low) * VIEW;
    const x = (f) => f * VIEW;
    const chart = htmlElement("div", "tchart");
    chart.setAttribute("role", "img");
    chart.setAttribute("aria-label", "trend of " + (spec.lines[0] ? spec.lines[0].y.length : 0) + " runs" +
      (ticks.length ? ", axis from " + ticks[0][1] + " to " + ticks[ticks.length - 1][1] + " " + axis.title : ""));
    chart.style.setProperty("--label-chars", String(Math.max(1, ...ticks.map((t) => t[1].length))));
    chart.dataset.low = String(low);
    chart.dataset.high = String(high);
    chart.dataset.size = String(axis.size);
    chart.dataset.symbol = axis.title;
    if (log) chart.dataset.log = "1";
    chart.appendChild(htmlElement("span", "unit", axis.title));
    const plot = htmlElement("div", "plot");
    const svg = svgElement("svg", { viewBox: "0 0 " + VIEW + " " + VIEW, preserveAspectRatio: "none",
                                    "aria-hidden": "true" });
    ticks.forEach((t) => svg.appendChild(svgElement("line", { class: "grid", x1: 0, x2: VIEW,
                                                                y1: rounded(y(t[0])), y2: rounded(y(t[0])) })));
    const first = spec.lines[0];
    if (spec.spread && first && (!log || spec.spread.q1.every((v) => v > 0))) {
      const clip = (v) => rounded(Math.min(Math.max(y(v), 0), VIEW));
      const edge = spec.spread.q3.map((v, i) => rounded(x(first.x[i])) + "," + clip(v));
      for (let i = spec.spread.q1.length - 1; i >= 0; i -= 1) {
        edge.push(rounded(x(first.x[i])) + "," + clip(spec.spread.q1[i]));
      }
      svg.appendChild(svgElement("polygon", { class: "iqr", points: edge.join(" ") }));
    }
    if (spec.band && !log) {
      const from = x(spec.bandFrom || 0);
      svg.appendChild(svgElement("rect", { class: "band", x: rounded(from), width: rounded(VIEW - from),
                                           y: rounded(y(spec.band[1])),
                                           height: rounded(Math.max(y(spec.band[0]) - y(spec.band[1]), 2)) }));
    }
    (spec.envLines || []).forEach((e) => {
      const line = svgElement("line", { class: "env", x1: rounded(x(e.x)), x2: rounded(x(e.x)), y1: 0, y2: VIEW });
      line.appendChild(htmlTitle(e.label));
      svg.appendChild(line);
    });
    spec.lines.forEach((line) => {
      svg.appendChild(svgElement("polyline", {
        class: "line" + (line.css ? " " + line.css : ""),
        points: line.y.map((v, i) => rounded(x(line.x[i])) + "," + rounded(y(v))).join(" "),
      }));
    });
    if (spec.dot && first && first.y.length) {
      const last = first.y.length - 1;
      svg.appendChild(svgElement("path", { class: "dot", d: "M" + rounded(x(first.x[last])) + " " + rounded(y(first.y[last])) + "h0" }));
    }
    (spec.changePoints || []).forEach((c) => {
      const mark = svgElement("path", { class: "cp " + c.css, d: "M" + rounded(x(c.x)) + " " + rounded(y(c.y)) + "h0" });
      mark.appendChild(htmlTitle(c.label));
      svg.appendChild(mark);
    });
    const yAxis = htmlElement("div", "axis y");
    ticks.forEach((t) => {
      const tick = htmlElement("span", "tick", t[1]);
      tick.style.top = rounded(y(t[0]) / 10) + "%";
      yAxis.appendChild(tick);
    });
    const xAxis = htmlElement("div", "axis x");
    (spec.xTicks || []).forEach((t) => {
      const tick = htmlElement("span", "tick" + (t[2] ? " minor" : ""), t[1]);
      tick.style.left = rounded(t[0] * 100) + "%";
      xAxis.appendChild(tick);
    });
    plot.append(svg, yAxis, xAxis);
    chart.appendChild(plot);
    holder.replaceChildren(chart);
    return { low: low, high: high, log: log };
  }

  function htmlTitle(text) {
    const title = document.createElementNS(SVG, "title");
    title.textContent = text;
    return title;
  }

  // -- Small-multiple trends (overview and suite pages) ----------------------------------------
  // Each card fetches its trend file (render/trends.py) only when it scrolls near the view, and
  // is drawn with two value labels and its first and last date: cheap enough for hundreds of
  // cards without holding up input.
  function drawTrend(holder, trend) {
    const n = trend.median.length;
    const xs = trend.median.map((_, i) => (n > 1 ? i / (n - 1) : 0.5));
    const dates = (trend.dates || []).map((d) => Date.parse(d));
    const ticks = dates.length === 2 ? orderTicks([dates[0]].concat(dates[1] !== dates[0] ? [dates[1]] : []), 2) : [];
    drawChart(holder, {
      lines: [{ x: xs, y: trend.median }], unit: trend.unit || "", yTicks: 3, xTicks: ticks,
      band: trend.band, bandFrom: n > 1 ? (trend.band_from || 0) / (n - 1) : 0, dot: true,
      changePoints: trend.change_points.map((c) => ({ x: xs[c.index], y: trend.median[c.index],
                                                      css: c.regression ? "worse" : "better",
                                                      label: "change point" })),
    });
    const band = holder.querySelector("rect.band");
    if (band && trend.band) {
      const axis = holder.querySelector(".tchart").dataset;
      const size = Number(axis.size) || 1;
      band.appendChild(htmlTitle("noise band " + formatIn(trend.band[0], size, axis.symbol) + " – " +
                                 formatIn(trend.band[1], size, axis.symbol)));
    }
  }

  function drawTrends(drawings) {
    drawings.forEach((d) => {
      drawTrend(d.holder, d.trend);
      if (d.done) d.done();
    });
  }

  function setupTrends() {
    const cards = Array.from(document.querySelectorAll("[data-trend]"));
    if (!cards.length) return;
    // Trend files arrive one by one; the cards whose data came in during a frame are drawn
    // together just before that frame is painted.
    let pending = [];
    function drawPending() {
      const batch = pending;
      pending = [];
      drawTrends(batch);
    }
    function show(card) {
      const holder = card.querySelector(".trend-chart");
      return fetchJSON(card.dataset.trend)
        .then((trend) => new Promise((drawn) => {
          if (!pending.length) requestAnimationFrame(drawPending);
          pending.push({ holder: holder, trend: trend, done: () => { markRendered(card); drawn(); } });
        }))
        .catch((error) => showProblem(holder, "Could not load the data: " + error.message));
    }
    if (!("IntersectionObserver" in window)) {
      cards.forEach(show);
      return;
    }
    // Cards on screen are fetched at once; those just below it wait until the cards on
    // screen are drawn, so they do not compete with them for the first connections.
    let onScreenLoading = 0;
    let nearby = [];
    function showNearby() {
      const waiting = nearby;
      nearby = [];
      waiting.forEach(show);
    }
    const observer = new IntersectionObserver((entries) => {
      entries.forEach((entry) => {
        if (!entry.isIntersecting) return;
        observer.unobserve(entry.target);
        const box = entry.boundingClientRect;
        if (box.top < innerHeight && box.bottom > 0) {
          onScreenLoading += 1;
          show(entry.target).finally(() => {
            onScreenLoading -= 1;
            if (onScreenLoading === 0) showNearby();
          });
        } else {
          nearby.push(entry.target);
        }
      });
      if (onScreenLoading === 0) showNearby();
    }, { rootMargin: "200px 0px" });
    cards.forEach((card) => observer.observe(card));
  }

  // -- Overview --------------------------------------------------------------------------------
  // The compile suite's summary charts are drawn by the server; the trend cards here.
  function overviewPage() {
    setupRowFilters();
    setupTrends();
  }

  // -- Suite -----------------------------------------------------------------------------------
  function suitePage() {
    setupTrends();
    const search = document.getElementById("search");
    const selects = Array.from(document.querySelectorAll("select[data-facet]"));
    const rows = Array.from(document.querySelectorAll("#suite-table tbody tr"));
    const count = document.getElementById("row-count");
    function apply() {
      const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
      let shown = 0;
      rows.forEach((row) => {
        const haystack = row.dataset.search || "";
        const visible = words.every((w) => haystack.includes(w)) && selects.every((s) =>
          s.value === "" || row.getAttribute("data-" + s.dataset.facet.replace(/_/g, "-")) === s.value);
        row.hidden = !visible;
        if (visible) shown += 1;
      });
      count.textContent = shown + " of " + rows.length + " benchmarks";
    }
    search.addEventListener("input", apply);
    selects.forEach((s) => s.addEventListener("change", apply));
  }

  // -- Benchmark -------------------------------------------------------------------------------
  // en-US grouping without Intl: the first Intl formatter of a page costs tens of
  // milliseconds (locale data), a cost paid on the main thread while the page loads.
  function formatNumber(value) {
    if (value == null || !isFinite(value)) return "—";
    const magnitude = Math.abs(value);
    const parts = magnitude.toFixed(magnitude >= 100 ? 1 : magnitude >= 1 ? 3 : 5).split(".");
    const whole = parts[0].replace(/\B(?=(\d{3})+(?!\d))/g, ",");
    const fraction = (parts[1] || "").replace(/0+$/, "");
    return (value < 0 ? "-" : "") + whole + (fraction ? "." + fraction : "");
  }

  // Four significant digits, grouped in thousands: units.significant.
  function significant(number) {
    if (number === 0) return "0";
    const decimals = Math.max(0, 3 - Math.floor(Math.log10(Math.abs(number))));
    let text = number.toFixed(decimals);
    if (text.includes(".")) text = text.replace(/0+$/, "").replace(/\.$/, "");
    text = groupDigits(text);
    return text === "-0" ? "0" : text;
  }

  // A value in a chart's display unit (the `size` of one in the stored unit, its symbol).
  function formatIn(value, size, symbol) {
    if (value == null || !isFinite(value)) return "—";
    const shown = significant(value / size);
    return symbol ? shown + " " + symbol : shown;
  }

  function selectedIndexes(points, branch) {
    const out = [];
    for (let i = 0; i < points.median.length; i += 1) {
      if (branch === "" || points.branch[i] === branch) out.push(i);
    }
    return out;
  }

  function pick(array, indexes) {
    return indexes.map((i) => array[i]);
  }

  // Bytes [offset, offset + length) of a packed file (render/packs.py), asked for with an HTTP
  // range request. A server that ignores ranges (python -m http.server) answers with the whole
  // file: it is kept, so the other parts of it cost no second download.
  const wholeFiles = new Map();
  async function fetchPart(url, offset, length) {
    const end = offset + length;
    if (!wholeFiles.has(url)) {
      const range = "bytes=" + offset + "-" + (end - 1);
      const response = await fetch(url, { headers: { Range: range } });
      if (!response.ok) throw new Error(url + ": HTTP " + response.status);
      const body = await response.arrayBuffer();
      if (response.status === 206) {
        const sent = /^bytes (\d+)-/.exec(response.headers.get("Content-Range") || "");
        if (sent && Number(sent[1]) === offset && body.byteLength === length) return body;
        throw new Error(url + ": the server sent another range than asked for");
      }
      wholeFiles.set(url, body);
    }
    const whole = wholeFiles.get(url);
    if (whole.byteLength < end) throw new Error(url + ": shorter than its index says");
    return whole.slice(offset, end);
  }

  // A packed segment of `count` points (render/packs.py): a 36-byte header, then median and
  // spread as float32, then run steps, n, env, minute steps and branch, each stored minus its
  // base in 0, 1, 2 or 4 bytes, the widest first (so every typed array is aligned), then the
  // names its branch numbers refer to, as JSON, to its end.
  // Little-endian: the byte order of every platform browsers run on, which typed arrays use.
  // float32 values are read back as the six significant digits the JSON files carry.
  const SEGMENT_FORMAT = 3;
  const SEGMENT_HEADER = 36;
  const UNSIGNED = { 1: Uint8Array, 2: Uint16Array, 4: Uint32Array };
  function decodeSegment(buffer, count) {
    const header = new DataView(buffer, 0, SEGMENT_HEADER);
    if (header.getUint8(0) !== SEGMENT_FORMAT) throw new Error("a data segment of another format");
    const symmetric = header.getUint8(1) === 0;
    const names = ["run", "n", "env", "minute", "branch"];
    const stepped = { run: 8, minute: 12 };  // where the first value of a stepped column is
    const ints = {};
    names.forEach((name, i) => {
      ints[name] = { width: header.getUint8(2 + i), base: header.getInt32(16 + 4 * i, true),
                     size: name in stepped ? Math.max(count - 1, 0) : count };
    });
    let start = SEGMENT_HEADER;
    const floats = () => {
      const values = new Float32Array(buffer, start, count);
      start += 4 * count;
      return values;
    };
    const six = (v) => Number(v.toPrecision(6));
    const median = floats();
    const columns = { median: Array.from(median, six) };
    if (symmetric) {
      const half = floats();
      columns.q1 = Array.from(median, (m, i) => six(m - half[i]));
      columns.q3 = Array.from(median, (m, i) => six(m + half[i]));
    } else {
      columns.q1 = Array.from(floats(), six);
      columns.q3 = Array.from(floats(), six);
    }
    [4, 2, 1].forEach((width) => names.forEach((name) => {
      const column = ints[name];
      if (column.width !== width) return;
      column.stored = new UNSIGNED[width](buffer, start, column.size);
      start += width * column.size;
    }));
    const value = (name, i) => ints[name].base + (ints[name].stored ? ints[name].stored[i] : 0);
    names.forEach((name) => {
      const values = new Array(count);
      for (let i = 0; i < count; i += 1) {
        if (!(name in stepped)) values[i] = value(name, i);
        else values[i] = i === 0 ? header.getInt32(stepped[name], true) : values[i - 1] + value(name, i - 1);
      }
      columns[name] = values;
    });
    const tail = new Uint8Array(buffer, start);
    columns.branches = tail.length ? JSON.parse(new TextDecoder().decode(tail)) : [];
    return columns;
  }

  const runTables = new Map();
  function fetchRunTable(url) {
    if (!runTables.has(url)) runTables.set(url, fetchJSON(url));
    return runTables.get(url);
  }

  // Joins a series' history (render/data.py): the head file's points follow those of its
  // chunks. Each point carries when its run was made and on which branch, all the chart
  // needs; the rest of what is known of its run (commit, message, run id) is in the run
  // tables, fetched by withRunFacts only when a point is shown.
  const POINT_VALUES = ["env", "median", "q1", "q3", "n"];
  async function fetchSeries(url) {
    const head = await fetchJSON(url);
    const chunks = await Promise.all((head.chunks || []).map((c) => fetchPart(c.file, c.offset, c.length)
      .then((bytes) => decodeSegment(bytes, c.count))));
    const points = { pos: [], time: [], date: [], branch: [], run: [], sha: [], message: [], url: [] };
    POINT_VALUES.forEach((key) => { points[key] = []; });
    const own = Object.assign({ branches: head.branches }, head.points);  // minutes as steps
    own.minute = own.minute_steps.slice();
    for (let i = 1; i < own.minute.length; i += 1) own.minute[i] += own.minute[i - 1];
    chunks.concat([own]).forEach((part) => {
      for (let i = 0; i < part.run.length; i += 1) {
        const time = part.minute[i] * 60e3;
        points.pos.push(part.run[i]);
        points.time.push(time);
        points.date.push(new Date(time).toISOString().slice(0, 16) + "Z");
        points.branch.push(part.branches[part.branch[i]]);
        POINT_VALUES.forEach((key) => points[key].push(part[key][i]));
      }
    });
    ["run", "sha", "message", "url"].forEach((key) => { points[key] = new Array(points.pos.length); });
    head.points = points;
    return decorate(head);
  }

  // Fills in the commit, message and run id of the series' points `indexes` from the run
  // tables holding their runs (each fetched once per page, shared by every series), where
  // `key` (the commit: "sha"; everything, run id included: "run") is not known yet.
  async function withRunFacts(series, indexes, key) {
    const p = series.points;
    if (!p.pos) return;  // the page's own points came with their facts
    const firsts = series.run_table_first || [];
    const wanted = new Set();
    indexes.forEach((i) => {
      if (p[key || "sha"][i] !== undefined) return;
      let k = firsts.length - 1;
      while (k >= 0 && firsts[k] > p.pos[i]) k -= 1;
      if (k < 0) throw new Error("no run table holds run " + p.pos[i]);
      wanted.add(k);
    });
    if (!series.joined) series.joined = new Map();  // run table -> its facts filled in
    await Promise.all(Array.from(wanted, (k) => {
      if (!series.joined.has(k)) series.joined.set(k, fetchRunTable(series.run_tables[k]).then((t) => joinRunTable(p, t)));
      return series.joined.get(k);
    }));
  }

  function joinRunTable(p, t) {
    const prefix = t.commit_url_prefix;
    for (let i = 0; i < p.pos.length; i += 1) {
      const row = p.pos[i] - t.first;
      if (row < 0 || row >= t.run.length) continue;
      const sha = t.sha[row];
      p.run[i] = t.run[row];
      p.date[i] = t.date[row];
      p.sha[i] = sha;
      p.message[i] = t.message[row];
      p.url[i] = t.url ? t.url[row] : (prefix && sha ? prefix + sha : null);
    }
  }

  function knowsRun(point) {
    const p = point.series.points;
    return !p.pos || p.sha[point.index] !== undefined;
  }

  // The drawn points' commits, as the page embeds them, for the same points of the whole
  // history: pointing at the newest runs needs no run table.
  function seedRunFacts(series, embedded) {
    const p = series.points;
    ["sha", "message", "url", "date"].forEach((key) => embedded[key].forEach((value, i) => {
      if (p.run[embedded.first + i] === undefined) p[key][embedded.first + i] = value;
    }));
  }

  // Expands a joined series into one array entry per point and column.
  function decorate(series) {
    const p = series.points;
    const envs = series.environments;
    p.gpu = p.env.map((k) => envs[k].gpu);
    p.torch = p.env.map((k) => envs[k].torch);
    p.env = p.env.map((k) => envs[k].label);
    return series;
  }

  // The page's own copy of the drawn points (trends.chart_points), as a series until the whole
  // history has been fetched.
  function embeddedSeries(embedded, unit) {
    const p = embedded;
    return { unit: unit, first: p.first, band: p.band, band_from: p.band_from,
             points: { date: p.date, median: p.median, sha: p.sha, branch: p.branch, url: p.url,
                       message: p.message, time: p.date.map((d) => Date.parse(d)) },
             change_points: p.change_points.map((c) => ({ index: c.index - p.first, ratio: c.ratio,
                                                           regression: c.regression })),
             env_changes: [], overlays: {} };
  }

  function tipRows(tip, rows) {
    tip.replaceChildren();
    rows.forEach((row) => tip.appendChild(row));
  }

  // The page lists the drawn points' branches (pages.branch_choices); once the whole history
  // is here, its other branches join them, in the same sorted order after "all branches".
  function addBranchChoices(select, branches) {
    const listed = new Set(Array.from(select.options, (o) => o.value));
    const names = new Set(branches.filter((b) => b && !listed.has(b)));
    if (!names.size) return;
    const all = Array.from(select.options).slice(1).map((o) => o.value).concat(Array.from(names)).sort();
    const chosen = select.value;
    select.replaceChildren(select.options[0], ...all.map((b) => new Option(b, b)));
    select.value = chosen;
  }

  function benchmarkPage() {
    const element = document.getElementById("trend");
    const controls = {
      branch: document.getElementById("branch"), overlay: document.getElementById("overlay"),
      axis: document.getElementById("axis"), log: document.getElementById("log-scale"),
    };
    const zoomAll = document.getElementById("zoom-all");
    const zoomRecent = document.getElementById("zoom-recent");
    const zoomState = document.getElementById("zoom-state");
    const embedded = JSON.parse(document.getElementById("chart-points").textContent);
    const recentCount = embedded.median.length;
    const cache = new Map();
    let full = null;  // the whole history, once fetched
    let zoom = { mode: "recent" };  // or {mode: "all"} or {mode: "range", from, to} (times)
    // What is drawn: one entry per drawn point, its position (0..1) and where it came from.
    let drawn = { points: [], lines: [] };

    async function load(url) {
      if (!cache.has(url)) cache.set(url, fetchSeries(url));
      return cache.get(url);
    }

    function state() {
      return { branch: controls.branch.value, overlay: controls.overlay.value,
               axis: controls.overlay.value ? "date" : controls.axis.value, log: controls.log.checked };
    }

    // The indexes of `series` shown under the zoom, among those of the branch.
    function zoomed(series, indexes) {
      if (zoom.mode === "recent") return indexes.slice(-recentCount);
      if (zoom.mode === "all") return indexes;
      const times = series.points.time;
      return indexes.filter((i) => times[i] >= zoom.from && times[i] <= zoom.to);
    }

    function positions(series, indexes, axis, span) {
      if (axis === "date") {
        return indexes.map((i) => (span[1] > span[0] ? (series.points.time[i] - span[0]) / (span[1] - span[0]) : 0.5));
      }
      return indexes.map((_, k) => (indexes.length > 1 ? k / (indexes.length - 1) : 0.5));
    }

    async function lines(s) {
      const series = full;
      if (s.overlay && series.overlays[s.overlay]) {
        const siblings = series.overlays[s.overlay];
        const loaded = await Promise.all(siblings.map((entry) => load(entry.file)));
        return loaded.map((other, k) => ({ series: other, name: s.overlay + "=" + siblings[k].value,
                                           indexes: zoomed(other, selectedIndexes(other.points, s.branch)) }));
      }
      if (s.overlay) {
        const field = series.points[s.overlay];
        const chosen = zoomed(series, selectedIndexes(series.points, s.branch));
        return Array.from(new Set(pick(field, chosen))).map((value) => ({
          series: series, name: s.overlay + "=" + value, indexes: chosen.filter((i) => field[i] === value) }));
      }
      return [{ series: series, name: "median", indexes: zoomed(series, selectedIndexes(series.points, s.branch)) }];
    }

    async function draw() {
      const s = state();
      const shown = (await lines(s)).filter((l) => l.indexes.length);
      const times = [];
      shown.forEach((l) => l.indexes.forEach((i) => times.push(l.series.points.time[i])));
      const span = [Math.min.apply(null, times), Math.max.apply(null, times)];
      const spec = { lines: [], unit: full.unit, log: s.log, dot: !s.overlay, changePoints: [], envLines: [] };
      const points = [];
      shown.forEach((l, k) => {
        const xs = positions(l.series, l.indexes, s.axis, span);
        spec.lines.push({ x: xs, y: pick(l.series.points.median, l.indexes), css: s.overlay ? "s" + (k % 6) : "" });
        l.indexes.forEach((i, j) => points.push({ x: xs[j], line: k, index: i, series: l.series, name: l.name }));
      });
      const main = shown.length === 1 && !s.overlay ? shown[0] : null;
      if (s.axis === "date") {
        spec.xTicks = timeTicks(span[0], span[1], X_TICKS);
      } else {
        spec.xTicks = main ? orderTicks(pick(main.series.points.time, main.indexes), X_TICKS) : [];
      }
      if (main) {
        const where = new Map(main.indexes.map((i, k) => [i, k]));
        const xs = spec.lines[0].x;
        spec.changePoints = full.change_points.filter((c) => where.has(c.index)).map((c) => ({
          x: xs[where.get(c.index)], y: full.points.median[c.index], css: c.regression ? "worse" : "better",
          label: "change point " + ((c.ratio - 1) * 100 >= 0 ? "+" : "") + ((c.ratio - 1) * 100).toFixed(1) + "%"
            + (c.note ? " — " + c.note : "") }));
        spec.envLines = full.env_changes.filter((c) => where.has(c.index) && where.get(c.index) > 0).map((c) => ({
          x: (xs[where.get(c.index)] + xs[where.get(c.index) - 1]) / 2, label: c.label }));
        spec.spread = { q1: pick(full.points.q1, main.indexes), q3: pick(full.points.q3, main.indexes) };
        const start = main.indexes.findIndex((i) => i >= embedded.band_from);
        if (embedded.band && !s.branch && start >= 0) {
          spec.band = embedded.band;
          spec.bandFrom = xs[start];
        }
      }
      drawChart(element, spec);
      element.appendChild(tip);  // the drawing replaced the chart's contents
      drawn = { points: points, lines: shown };
      legend(shown, s);
      zoomState.textContent = zoom.mode === "recent" ? "newest " + recentCount + " runs"
        : zoom.mode === "all" ? "whole history" : points.length + " points zoomed";
      zoomAll.disabled = zoom.mode === "all";
      zoomRecent.disabled = zoom.mode === "recent";
      markRendered(element);
    }

    function legend(shown, s) {
      let holder = document.getElementById("trend-legend");
      if (!s.overlay) {
        if (holder) holder.remove();
        return;
      }
      if (!holder) {
        holder = htmlElement("p", "legend");
        holder.id = "trend-legend";
        element.after(holder);
      }
      holder.replaceChildren(...shown.map((l, k) => {
        const item = htmlElement("span", "", null);
        item.append(htmlElement("span", "key s" + (k % 6)), document.createTextNode(l.name));
        return item;
      }));
    }

    // -- hover, click and zoom over whichever chart is drawn (the server's or drawChart's)
    const tip = htmlElement("div", "tip");
    tip.hidden = true;
    tip.id = "trend-tip";
    element.appendChild(tip);
    let drag = null;

    function plotBox() {
      const plot = element.querySelector(".plot");
      return plot ? plot.getBoundingClientRect() : null;
    }

    function plotY(value) {
      const chart = element.querySelector(".tchart");
      const low = Number(chart.dataset.low);
      const high = Number(chart.dataset.high);
      const v = chart.dataset.log ? Math.log(value) : value;
      return 1 - (v - low) / (high - low);
    }

    // The drawn point nearest the pointer (within `reach` px when given).
    function nearest(event, reach) {
      const box = plotBox();
      if (!box || !drawn.points.length) return null;
      let best = null;
      let bestDistance = Infinity;
      const single = drawn.lines.length === 1;
      drawn.points.forEach((p) => {
        const dx = p.x * box.width - (event.clientX - box.left);
        const dy = plotY(p.series.points.median[p.index]) * box.height - (event.clientY - box.top);
        const distance = single ? Math.abs(dx) : Math.hypot(dx, dy);
        if (distance < bestDistance) {
          best = p;
          bestDistance = single && reach ? Math.hypot(dx, dy) : distance;
        }
      });
      return reach && bestDistance > reach ? null : best;
    }

    function overlayMark(className) {
      const plot = element.querySelector(".plot");
      let mark = plot.querySelector("." + className);
      if (!mark) {
        mark = htmlElement("div", className);
        plot.appendChild(mark);
      }
      return mark;
    }

    // A tip follows the pointer and lets it through; after a tap it stays, its link usable.
    // A point whose run's commit is not yet known shows its value at once, and its commit
    // once the run table holding it arrives (data-hover says the tip is complete).
    let tipPoint = null;
    function showTip(point, pinned) {
      tipPoint = point;
      const known = knowsRun(point);
      if (!known) {
        withRunFacts(point.series, [point.index]).then(() => {
          if (tipPoint === point) showTip(point, pinned);
        }).catch((error) => showProblem(element, "Could not load the run: " + error.message));
      }
      tip.classList.toggle("pinned", Boolean(pinned));
      const box = plotBox();
      const p = point.series.points;
      const i = point.index;
      const y = plotY(p.median[i]);
      const cross = overlayMark("cross");
      cross.style.left = (point.x * 100) + "%";
      const here = overlayMark("here");
      here.style.left = (point.x * 100) + "%";
      here.style.top = (y * 100) + "%";
      const rows = [];
      const value = htmlElement("div", "", null);
      const axis = element.querySelector(".tchart").dataset;  // the chart's one unit
      const size = Number(axis.size) || 1;
      value.appendChild(htmlElement("strong", "", formatIn(p.median[i], size, axis.symbol)));
      if (p.n && p.n[i] <= 1) {
        value.appendChild(document.createTextNode(" · no spread recorded"));
      } else if (p.q1 && p.q3) {
        value.appendChild(document.createTextNode(" (IQR " + formatIn(p.q3[i] - p.q1[i], size, axis.symbol) + ")"));
      }
      if (drawn.lines.length > 1) value.appendChild(document.createTextNode(" · " + point.name));
      rows.push(value);
      const commit = htmlElement("div", "", null);
      const url = p.url[i];
      const sha = htmlElement("code", "", known ? (p.sha[i] || "").slice(0, 8) : "…");  // as short_sha
      if (typeof url === "string" && HTTP_URL.test(url)) {
        const link = htmlElement("a", "", null);
        link.href = url;
        link.target = "_blank";
        link.rel = "noopener";
        link.appendChild(sha);
        commit.appendChild(link);
      } else {
        commit.appendChild(sha);
      }
      commit.append(" on ", htmlElement("code", "branch", p.branch[i]), " · " + String(p.date[i]).slice(0, 16).replace("T", " "));
      rows.push(commit);
      rows.push(htmlElement("div", "message", known ? p.message[i] || "" : ""));
      if (p.env) rows.push(htmlElement("div", "message", p.env[i]));
      tipRows(tip, rows);
      tip.hidden = false;
      const host = element.getBoundingClientRect();
      const left = box.left - host.left + point.x * box.width;
      const width = tip.offsetWidth;
      // kept clear of the value axis' labels (left of the plot) wherever the tip fits
      const start = Math.max(0, Math.min(box.left - host.left, host.width - width));
      tip.style.left = Math.max(start, Math.min(left + 12, host.width - width)) + "px";
      if (left + 12 + width > host.width) tip.style.left = Math.max(start, left - 12 - width) + "px";
      tip.style.top = Math.max(0, box.top - host.top + y * box.height - tip.offsetHeight - 10) + "px";
      if (known) element.setAttribute("data-hover", String(i));
      else element.removeAttribute("data-hover");
    }

    function hideTip() {
      tipPoint = null;
      tip.hidden = true;
      element.querySelectorAll(".cross, .here").forEach((mark) => mark.remove());
      element.removeAttribute("data-hover");
    }

    element.addEventListener("pointermove", (event) => {
      if (tip.contains(event.target) || event.pointerType === "touch") return;
      if (drag) {
        const box = plotBox();
        const x = Math.min(Math.max(event.clientX - box.left, 0), box.width);
        if (Math.abs(x - drag.x) > 6) {
          drag.moved = true;
          const select = overlayMark("select");
          select.style.left = Math.min(x, drag.x) / box.width * 100 + "%";
          select.style.width = Math.abs(x - drag.x) / box.width * 100 + "%";
        }
        drag.to = x;
        return;
      }
      const point = nearest(event);
      if (point) showTip(point);
    });
    // A touch pointer leaves when the finger lifts: its tip stays until a tap elsewhere.
    element.addEventListener("pointerleave", (event) => {
      if (!drag && event.pointerType !== "touch") hideTip();
    });
    document.addEventListener("pointerdown", (event) => {
      if (!element.contains(event.target)) hideTip();
    });
    element.addEventListener("pointerdown", (event) => {
      const box = plotBox();
      if (!box || event.button !== 0 || tip.contains(event.target)) return;
      if (event.pointerType === "touch") {  // a tap shows the values; the tip links the commit
        const point = nearest(event);
        if (point) showTip(point, true);
        return;
      }
      if (event.clientX < box.left || event.clientX > box.right || event.clientY < box.top || event.clientY > box.bottom) return;
      drag = { x: event.clientX - box.left, to: event.clientX - box.left, moved: false };
    });
    window.addEventListener("pointerup", (event) => {
      if (!drag) return;
      const done = drag;
      drag = null;
      element.querySelectorAll(".select").forEach((mark) => mark.remove());
      if (done.moved) {
        zoomTo(Math.min(done.x, done.to), Math.max(done.x, done.to));
        return;
      }
      const point = nearest(event, 16);  // a click on a point opens its commit
      if (!point) return;
      const open = () => {
        const url = point.series.points.url[point.index];
        if (typeof url === "string" && HTTP_URL.test(url)) window.open(url, "_blank", "noopener");
      };
      // a click still counts as one for a few seconds: long enough for the run's table
      if (knowsRun(point)) open();
      else withRunFacts(point.series, [point.index]).then(open)
        .catch((error) => showProblem(element, "Could not load the run: " + error.message));
    });
    element.addEventListener("dblclick", () => setZoom({ mode: "all" }));
    // From the keyboard: arrows step from run to run, Escape hides the values.
    let stepped = -1;
    element.addEventListener("keydown", (event) => {
      if (event.key === "Escape") {
        hideTip();
        return;
      }
      const step = { ArrowLeft: -1, ArrowRight: 1 }[event.key];
      if (!step || !drawn.points.length) return;
      event.preventDefault();
      const ordered = drawn.points.slice().sort((a, b) => a.x - b.x);
      const at = ordered.indexOf(drawn.points[stepped]);
      const next = ordered[at < 0 ? ordered.length - 1 : Math.min(Math.max(at + step, 0), ordered.length - 1)];
      stepped = drawn.points.indexOf(next);
      showTip(next, true);
    });

    // Zooms to the points drawn between two pointer positions (px from the plot's left).
    function zoomTo(from, to) {
      const box = plotBox();
      const inside = drawn.points.filter((p) => p.x * box.width >= from && p.x * box.width <= to);
      if (inside.length < 2) return;
      const times = inside.map((p) => p.series.points.time[p.index]);
      setZoom({ mode: "range", from: Math.min.apply(null, times), to: Math.max.apply(null, times) });
    }

    function setZoom(next) {
      zoom = next;
      hideTip();
      makeInteractive().then(draw).catch((error) => showProblem(element, "Could not draw the chart: " + error.message));
    }

    // The whole history is fetched when the browser is idle after the first paint (or at
    // once when the reader points at the chart or changes a control). Nothing heavier than
    // JSON.parse of the series file runs then: the chart code is this script, already loaded.
    let interactive = null;
    function makeInteractive() {
      if (!interactive) {
        interactive = load(element.dataset.series).then((loaded) => {
          full = loaded;
          seedRunFacts(full, embedded);
          addBranchChoices(controls.branch, full.points.branch);
          drawn.points.forEach((p) => { p.series = full; p.index += embedded.first; });
          element.setAttribute("data-interactive", "1");
          zoomAll.disabled = false;
        });
        interactive.catch((error) => showProblem(element, "Could not load the data: " + error.message));
      }
      return interactive;
    }

    // Until the history is fetched, hover and commit links use the page's own points.
    const own = embeddedSeries(embedded, element.dataset.unit);
    drawn = { points: own.points.median.map((_, i) => ({
      x: own.points.median.length > 1 ? i / (own.points.median.length - 1) : 0.5, line: 0, index: i,
      series: own, name: "median" })), lines: [{}] };

    document.getElementById("download-csv").addEventListener("click", (event) => {
      event.preventDefault();
      makeInteractive().then(() => withRunFacts(full, full.points.median.map((_, i) => i), "run"))
        .then(() => downloadCSV(full, controls.branch.value))
        .catch((error) => showProblem(element, "Could not load the data: " + error.message));
    });
    zoomAll.addEventListener("click", () => setZoom({ mode: "all" }));
    zoomRecent.addEventListener("click", () => setZoom({ mode: "recent" }));
    Object.values(controls).forEach((c) => c.addEventListener("change", () => setZoom(zoom)));
    element.addEventListener("pointerenter", makeInteractive);
    element.addEventListener("focus", makeInteractive);
    if ("requestIdleCallback" in window) {
      requestIdleCallback(makeInteractive, { timeout: 2000 });
    } else {
      setTimeout(makeInteractive, 200);
    }
  }

  function downloadCSV(series, branch) {
    const p = series.points;
    const columns = ["date", "run", "sha", "branch", "median", "q1", "q3", "n", "env", "message"];
    const quote = (v) => {
      const text = v == null ? "" : String(v);
      return /[",\n\r]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
    };
    const idx = selectedIndexes(p, branch);
    const lines = [columns.join(",")].concat(
      idx.map((i) => columns.map((c) => quote(p[c][i])).join(",")));
    const blob = new Blob([lines.join("\n") + "\n"], { type: "text/csv" });
    const link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = (series.suite + "-" + series.name + "-" + series.metric)
      .replace(/[^A-Za-z0-9_.-]+/g, "_") + ".csv";
    document.body.appendChild(link);
    link.click();
    link.remove();
  }

  // -- Training --------------------------------------------------------------------------------
  function trainingPage() {
    const select = document.getElementById("training-run");
    if (!select) return;
    const holder = document.getElementById("loss-charts");
    fetchJSON(select.dataset.src).then((data) => {
      select.replaceChildren();
      data.runs.forEach((run, k) => {
        const option = document.createElement("option");
        option.value = String(k);
        option.textContent = run.date + " · " + run.branch + " · " + run.sha;
        select.appendChild(option);
      });
      const draw = () => drawTraining(holder, data.runs[Number(select.value)]);
      select.addEventListener("change", draw);
      draw();
    }).catch((error) => showProblem(holder, "Could not load the data: " + error.message));
  }

  function drawTraining(holder, run) {
    holder.replaceChildren();
    const groups = new Map();
    run.curves.forEach((curve) => {
      const key = curve.name + (curve.params ? " (" + curve.params + ")" : "");
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(curve);
    });
    const t = theme();
    // Every figure is in the grid before any chart is drawn: a chart drawn while it was the
    // only item would take the whole row's width and spill into its neighbour afterwards.
    const drawings = [];
    groups.forEach((curves, title) => {
      const figure = document.createElement("figure");
      const caption = document.createElement("figcaption");
      const same = curves.length > 1 && curves.every((c) => sameCurve(c.loss, curves[0].loss));
      caption.textContent = title + (same ? " — the curves are identical" : "");
      const chart = document.createElement("div");
      chart.className = "chart small loss-chart";
      figure.append(caption, chart);
      holder.appendChild(figure);
      // Native first and wide underneath, so a compiled curve on top of it stays visible.
      const ordered = curves.slice().sort((a, b) => Number(isNative(b)) - Number(isNative(a)));
      const traces = ordered.map((curve) => {
        const label = isNative(curve) ? "native (" + curve.backend + ")" : curve.backend;
        return {
          y: curve.loss, x: curve.loss.map((_, i) => i + 1), type: "scatter", mode: "lines",
          name: label, meta: curve.backend,
          line: isNative(curve) ? { color: t.muted, width: 6 } : { width: 2 },
          opacity: isNative(curve) ? 0.45 : 1,
          hovertemplate: "step %{x}: %{y:.4f}<extra>" + escapeText(label) + "</extra>",
        };
      });
      drawings.push(() => Plotly.newPlot(chart, traces, baseLayout({
        showlegend: true,
        xaxis: { type: "linear", title: { text: "step" }, gridcolor: t.line, automargin: true },
        yaxis: { title: { text: "loss" }, gridcolor: t.line, automargin: true },
      }), PLOT_CONFIG).then(() => markRendered(chart)));
    });
    drawings.forEach((draw) => draw());
  }

  function isNative(curve) {
    return curve.runtime === "native" || curve.backend === "eager";
  }

  function sameCurve(a, b) {
    if (a.length !== b.length) return false;
    return a.every((v, i) => Math.abs(v - b[i]) <= 1e-9 * Math.max(Math.abs(v), Math.abs(b[i]), 1e-30));
  }

  // -- Compare ---------------------------------------------------------------------------------
  // benchmarks.json gives params as "k=v, k=v" (sorted by key); a new item starts at ", "
  // followed by a key and "=", so a value holding ", " stays whole unless a "=" follows.
  function paramItems(text) {
    return text ? text.split(/, (?=[^,=]+=)/) : [];
  }

  // The items every list has (none for a single list: there is nothing to factor out).
  function commonItems(lists) {
    if (lists.length < 2) return [];
    return lists[0].filter((item) => lists.every((list) => list.includes(item)));
  }

  function comparePage() {
    const form = document.getElementById("compare-form");
    if (!form) return;
    const selects = [document.getElementById("run-a"), document.getElementById("run-b")];
    const search = document.getElementById("compare-search");
    const table = document.getElementById("compare-table");
    const root = form.dataset.root;  // run files and pages are named relative to the root
    let runs = [];
    let benchmarks = [];

    const shared = document.getElementById("compare-shared");

    // Searches the params a row shares with the others too, though only its own are shown.
    function filterRows() {
      const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
      table.querySelectorAll("tbody tr").forEach((row) => {
        const text = (row.textContent + " " + (row.dataset.params || "")).toLowerCase();
        row.hidden = !words.every((w) => text.includes(w));
      });
    }

    function cell(text, className) {
      const td = document.createElement("td");
      td.textContent = text;
      if (className) td.className = className;
      return td;
    }

    // Coloured only beyond the noise band and the minimum effect the Python side wrote into
    // benchmarks.json (render/noise_band.py); unknown noise is never coloured.
    function changeClass(ratio, bench) {
      const noise = bench.noise || {};
      if (ratio == null || ratio <= 0 || noise.log_band == null) return "same";
      if (Math.abs(Math.log(ratio)) <= noise.log_band ||
          Math.abs(ratio - 1) < noise.min_effect) return "same";
      return (ratio < 1) === (bench.direction === "lower") ? "better" : "worse";
    }

    function showRun(letter, run) {
      document.getElementById("run-" + letter + "-date").textContent = run.date;
      document.getElementById("run-" + letter + "-branch").textContent = run.branch;
      document.getElementById("run-" + letter + "-commit").textContent = run.sha;
      document.getElementById("run-" + letter + "-message").textContent = run.message;
      document.getElementById("run-" + letter + "-env").textContent = run.env;
    }

    // A run's values: its part of the values pack its run table locates (render/packs.py):
    // uint32 length of a JSON header, the header, padding to 4 bytes, float32 medians (NaN:
    // none), read back as the six significant digits they were written with.
    async function fetchRunValues(run) {
      const table = await fetchRunTable(root + run.table);
      const offsets = table.values.offsets;
      const bytes = await fetchPart(root + table.values.file, offsets[run.line],
                                    offsets[run.line + 1] - offsets[run.line]);
      const length = new DataView(bytes).getUint32(0, true);
      const doc = JSON.parse(new TextDecoder().decode(new Uint8Array(bytes, 4, length)));
      const count = doc.series.reduce((sum, span) => sum + span[1], 0);
      const medians = new Float32Array(bytes, 4 + length + ((4 - (length % 4)) % 4), count);
      doc.median = Array.from(medians, (v) => (isNaN(v) ? null : Number(v.toPrecision(6))));
      return doc;
    }

    async function render() {
      const chosen = selects.map((s) => runs.find((r) => r.run === s.value));
      const [a, b] = await Promise.all(chosen.map(fetchRunValues));
      showRun("a", chosen[0]);
      showRun("b", chosen[1]);
      const values = [new Map(), new Map()];
      [a, b].forEach((doc, k) => {
        let i = 0;  // "series" is spans [first, count] of consecutive positions
        doc.series.forEach(([first, count]) => {
          for (let pos = first; pos < first + count; pos += 1, i += 1) {
            const status = doc.statuses[doc.status ? doc.status[i] : 0];
            values[k].set(pos, { median: doc.median[i], status: status });
          }
        });
      });
      const positions = Array.from(new Set([...values[0].keys(), ...values[1].keys()]))
        .sort((x, y) => x - y);
      const params = positions.map((pos) => paramItems(benchmarks[pos].params));
      const common = commonItems(params);
      shared.querySelector(".params").textContent = common.join(", ");
      shared.hidden = common.length === 0;
      const body = document.createElement("tbody");
      positions.forEach((pos, k) => {
        const bench = benchmarks[pos];
        const va = values[0].get(pos);
        const vb = values[1].get(pos);
        // both values in one unit, the one that suits the larger (pages.compare_rows)
        const largest = Math.max(...[va, vb].map((v) => (v && v.median != null ? Math.abs(v.median) : 0)));
        const [size, symbol] = displayUnit(largest, bench.unit);
        const show = (v) => v == null ? "—" : v.median == null ? v.status : formatIn(v.median, size, "");
        const ratio = va && vb && va.median && vb.median != null ? vb.median / va.median : null;
        const css = changeClass(ratio, bench);
        const row = document.createElement("tr");
        const name = document.createElement("td");
        const link = document.createElement("a");
        link.href = root + bench.page;
        link.textContent = bench.title;
        name.appendChild(link);
        row.dataset.params = bench.params;
        row.append(name, cell(params[k].filter((item) => !common.includes(item)).join(", "), "params"),
                   cell(symbol || (bench.unit === "ratio" ? "ratio" : "")), cell(show(va), "num"),
                   cell(show(vb), "num"), cell(ratio == null ? "—" : ratio.toFixed(3), "num"),
                   cell(ratio == null ? "—" : ((ratio - 1) * 100 >= 0 ? "+" : "") +
                        ((ratio - 1) * 100).toFixed(1) + "%", "num " + css));
        row.lastChild.title = (bench.noise && bench.noise.text) || "";
        body.appendChild(row);
      });
      table.tBodies[0].replaceWith(body);
      filterRows();
      table.setAttribute("data-rendered", "1");
    }

    Promise.all([fetchJSON(form.dataset.runs), fetchJSON(form.dataset.benchmarks)])
      .then(([loadedRuns, loadedBenchmarks]) => {
        runs = loadedRuns;
        benchmarks = loadedBenchmarks;
        selects.forEach((select) => {
          const current = select.value;
          select.replaceChildren();
          runs.forEach((run) => {
            const option = document.createElement("option");
            option.value = run.run;
            option.textContent = run.date + " · " + run.branch + " · " + run.sha + " · " +
              run.message.slice(0, 50);
            select.appendChild(option);
          });
          select.value = current;
          select.addEventListener("change", () => render().catch((error) =>
            showProblem(table.parentElement, "Could not load the runs: " + error.message)));
        });
        form.setAttribute("data-ready", "1");
      })
      .catch((error) => showProblem(form, "Could not load the runs: " + error.message));
    search.addEventListener("input", filterRows);
  }

  const PAGES = { overview: overviewPage, suite: suitePage, benchmark: benchmarkPage,
                  training: trainingPage, compare: comparePage };
  const page = PAGES[document.body.dataset.page];
  if (page) page();
})();
