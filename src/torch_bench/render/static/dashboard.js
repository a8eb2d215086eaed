// torch-bench dashboard. Vanilla JavaScript, no build step.
//
// Contract with the Python side (src/torch_bench/render/paths.py and data.py): this script
// never builds a path; it fetches only the URLs written into the pages (data-* attributes)
// and into the data files ("file" fields). Text from users or git is only ever inserted with
// textContent, or escaped before it reaches Plotly's hover labels.
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

  // -- Small-multiple trends (overview and suite pages) ----------------------------------------
  // Each card fetches its trend file (render/trends.py) only when it scrolls near the view, and
  // is drawn as a plain SVG: cheap enough for hundreds of cards without holding up input.
  const SVG = "http://www.w3.org/2000/svg";

  function svgElement(name, attributes) {
    const element = document.createElementNS(SVG, name);
    Object.keys(attributes).forEach((key) => element.setAttribute(key, attributes[key]));
    return element;
  }

  // `size` ({width, height}) saves a layout per chart when many are drawn at once.
  function drawTrend(holder, trend, size) {
    const width = (size ? size.width : holder.clientWidth) || 230;
    const height = (size ? size.height : holder.clientHeight) || 64;
    const pad = 4;
    const values = trend.median;
    const all = values.concat(trend.band || []);
    let low = Math.min.apply(null, all);
    let high = Math.max.apply(null, all);
    const span = Math.max(high - low, 0.05 * Math.abs(low + high) / 2) || 1;
    low = (low + high) / 2 - span / 2;
    high = low + span;
    const x = (i) => pad + i * (width - 2 * pad) / Math.max(values.length - 1, 1);
    const y = (v) => height - pad - (v - low) / (high - low) * (height - 2 * pad);
    const svg = svgElement("svg", { viewBox: "0 0 " + width + " " + height, role: "img",
                                    "aria-label": "trend of the last " + values.length + " runs" });
    if (trend.band) {
      const band = svgElement("rect", { class: "band", x: 0, width: width,
                                        y: y(trend.band[1]), height: Math.max(y(trend.band[0]) - y(trend.band[1]), 1) });
      const title = svgElement("title", {});
      title.textContent = "noise band " + formatNumber(trend.band[0]) + " – " + formatNumber(trend.band[1]);
      band.appendChild(title);
      svg.appendChild(band);
    }
    svg.appendChild(svgElement("polyline", {
      class: "line", points: values.map((v, i) => x(i).toFixed(1) + "," + y(v).toFixed(1)).join(" "),
    }));
    trend.change_points.forEach((c) => {
      const cx = x(c.index);
      const cy = y(values[c.index]);
      const diamond = svgElement("path", {
        class: "cp " + (c.regression ? "worse" : "better"),
        d: "M" + cx + " " + (cy - 5) + "l5 5l-5 5l-5 -5z",
      });
      svg.appendChild(diamond);
    });
    holder.replaceChildren(svg);
  }

  // Measures every holder first and then draws them all: one layout for the whole batch
  // instead of one per chart (reading a size after a drawing forces the page's layout again).
  function drawTrends(drawings) {
    const sizes = drawings.map((d) => ({ width: d.holder.clientWidth, height: d.holder.clientHeight }));
    drawings.forEach((d, k) => {
      drawTrend(d.holder, d.trend, sizes[k]);
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

  const scripts = new Map();
  function loadScript(url) {
    if (!scripts.has(url)) {
      scripts.set(url, new Promise((resolve, reject) => {
        const script = document.createElement("script");
        script.src = url;
        script.onload = resolve;
        script.onerror = () => reject(new Error(url + ": could not be loaded"));
        document.head.appendChild(script);
      }));
    }
    return scripts.get(url);
  }

  // -- Overview --------------------------------------------------------------------------------
  function overviewPage() {
    setupRowFilters();
    setupTrends();
    const source = document.getElementById("summary-data");
    if (!source) return;
    const charts = JSON.parse(source.textContent);
    // Plain SVG like the trend cards: the overview loads no chart library.
    const elements = Array.from(document.querySelectorAll("[data-summary-chart]"));
    elements.forEach((element) => element.classList.add("trend-chart", "summary-chart"));
    drawTrends(elements.map((element) => {
      const chart = charts[Number(element.dataset.summaryChart)];
      return { holder: element, trend: { median: chart.y, change_points: [], band: null },
               done: () => summaryDrawn(element, chart) };
    }));
  }

  function summaryDrawn(element, chart) {
    const title = document.createElementNS(SVG, "title");
    const last = chart.y.length - 1;
    title.textContent = last < 0 ? "" : "latest " + formatNumber(chart.y[last]) + " " +
      chart.unit + " (" + chart.sha[last] + ", " + chart.branch[last] + ", " + chart.x[last] + ")";
    element.querySelector("svg").appendChild(title);
    element.setAttribute("data-points", String(chart.y.length));
    markRendered(element);
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
  function pointLabel(date, sha) {
    return date.slice(0, 16).replace("T", " ") + " " + (sha || "").slice(0, 7);
  }

  function hoverText(series, p, i) {
    return "<b>" + escapeText(series.median_label(p.median[i])) + "</b>" +
      " (IQR " + escapeText(formatNumber(p.q3[i] - p.q1[i])) + ")<br>" +
      "commit " + escapeText((p.sha[i] || "").slice(0, 10)) + " on " + escapeText(p.branch[i]) +
      "<br>" + escapeText((p.message[i] || "").slice(0, 90)) + "<br>" +
      escapeText(p.date[i]) + "<br>" + escapeText(p.env[i]);
  }

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

  function selectedIndexes(points, branch) {
    const out = [];
    for (let i = 0; i < points.median.length; i += 1) {
      if (branch === "" || points.branch[i] === branch) out.push(i);
    }
    return out;
  }

  function xValues(points, indexes, axis) {
    return indexes.map((i) => axis === "date" ? points.date[i] : pointLabel(points.date[i], points.sha[i]));
  }

  function pick(array, indexes) {
    return indexes.map((i) => array[i]);
  }

  function seriesTraces(series, state, name, color, withBand) {
    const p = series.points;
    const idx = selectedIndexes(p, state.branch);
    const x = xValues(p, idx, state.axis);
    const traces = [];
    if (withBand) {
      traces.push({ x: x, y: pick(p.q1, idx), type: "scatter", mode: "lines",
                    line: { width: 0 }, hoverinfo: "skip", showlegend: false, name: "q1" });
      traces.push({ x: x, y: pick(p.q3, idx), type: "scatter", mode: "lines", fill: "tonexty",
                    fillcolor: "rgba(128,128,128,0.22)", line: { width: 0 }, hoverinfo: "skip",
                    showlegend: false, name: "IQR" });
    }
    traces.push({
      x: x, y: pick(p.median, idx), type: "scatter", mode: "lines+markers", name: name,
      meta: "median", customdata: pick(p.url, idx), text: idx.map((i) => hoverText(series, p, i)),
      hovertemplate: "%{text}<extra>" + escapeText(name) + "</extra>",
      line: color ? { color: color } : {}, marker: { size: 6 },
    });
    return { traces: traces, indexes: idx, x: x };
  }

  // Joins a series' history (render/data.py): the head file's points follow those of its
  // chunk files, fetched together; each part's commit URLs are expanded with its own prefix.
  async function fetchSeries(url) {
    const head = await fetchJSON(url);
    const chunks = await Promise.all((head.chunks || []).map((c) => fetchJSON(c.file)));
    const parts = chunks.concat([head]);
    const points = {};
    Object.keys(head.points).concat(["url"]).forEach((key) => { points[key] = []; });
    parts.forEach((part) => {
      const p = part.points;
      const prefix = part.commit_url_prefix;
      const urls = p.url || p.sha.map((sha) => (prefix && sha ? prefix + sha : null));
      Object.keys(points).forEach((key) => {
        const column = key === "url" ? urls : p[key];
        for (let i = 0; i < column.length; i += 1) points[key].push(column[i]);
      });
    });
    head.points = points;
    return decorate(head);
  }

  // Expands a joined series into one array entry per point and column.
  function decorate(series) {
    const p = series.points;
    const envs = series.environments;
    p.gpu = p.env.map((k) => envs[k].gpu);
    p.torch = p.env.map((k) => envs[k].torch);
    p.env = p.env.map((k) => envs[k].label);
    series.median_label = (v) => formatNumber(v) + " " + series.unit;
    return series;
  }

  function benchmarkPage() {
    const element = document.getElementById("trend");
    const controls = {
      branch: document.getElementById("branch"), overlay: document.getElementById("overlay"),
      axis: document.getElementById("axis"), log: document.getElementById("log-scale"),
    };
    const cache = new Map();
    let series = null;

    async function load(url) {
      if (!cache.has(url)) cache.set(url, fetchSeries(url));
      return cache.get(url);
    }

    function state() {
      return { branch: controls.branch.value, overlay: controls.overlay.value,
               axis: controls.axis.value, log: controls.log.checked };
    }

    async function draw() {
      const s = state();
      const t = theme();
      let traces = [];
      const shapes = [];
      const annotations = [];
      if (s.overlay && series.overlays[s.overlay]) {
        const siblings = series.overlays[s.overlay];
        const loaded = await Promise.all(siblings.map((entry) => load(entry.file)));
        loaded.forEach((other, k) => {
          traces = traces.concat(seriesTraces(other, s, s.overlay + "=" + siblings[k].value,
                                              null, false).traces);
        });
      } else if (s.overlay) {
        const field = series.points[s.overlay];
        const values = Array.from(new Set(field));
        values.forEach((value) => {
          const only = filterPoints(series, (i) => field[i] === value);
          traces = traces.concat(seriesTraces(only, s, s.overlay + "=" + value, null, false).traces);
        });
      } else {
        const main = seriesTraces(series, s, "median", t.link, true);
        traces = main.traces;
        const position = new Map(main.indexes.map((i, k) => [i, k]));
        const changes = series.change_points.filter((c) => position.has(c.index));
        if (changes.length) {
          traces.push({
            x: changes.map((c) => main.x[position.get(c.index)]),
            y: changes.map((c) => series.points.median[c.index]),
            type: "scatter", mode: "markers", name: "change point", meta: "change-points",
            marker: { symbol: "diamond", size: 13, color: changes.map((c) => c.regression ? t.worse : t.better),
                      line: { width: 1, color: t.fg } },
            text: changes.map((c) => "change point: " + formatNumber((c.ratio - 1) * 100) + "%"),
            hovertemplate: "%{text}<extra></extra>",
          });
        }
        series.env_changes.filter((c) => position.has(c.index)).forEach((c) => {
          const x = main.x[position.get(c.index)];
          shapes.push({ type: "line", xref: "x", yref: "paper", x0: x, x1: x, y0: 0, y1: 1,
                        line: { color: t.accent, width: 1, dash: "dash" } });
          annotations.push({ x: x, xref: "x", y: 1, yref: "paper", yanchor: "bottom",
                             text: escapeText(c.label), showarrow: false,
                             font: { size: 10, color: t.accent } });
        });
      }
      const layout = baseLayout({
        showlegend: Boolean(s.overlay), shapes: shapes, annotations: annotations,
        margin: { l: 60, r: 20, t: 30, b: 60 },
        yaxis: { type: s.log ? "log" : "linear", title: { text: escapeText(series.unit) },
                 gridcolor: t.line, automargin: true },
        xaxis: s.axis === "date"
          ? { type: "date", gridcolor: t.line, automargin: true }
          : { type: "category", categoryorder: "category ascending", gridcolor: t.line,
              automargin: true, nticks: 12 },
      });
      await Plotly.react(element, traces, layout, PLOT_CONFIG);
      markRendered(element);
    }

    function filterPoints(source, keep) {
      const p = source.points;
      const idx = [];
      for (let i = 0; i < p.median.length; i += 1) if (keep(i)) idx.push(i);
      const points = {};
      Object.keys(p).forEach((key) => { points[key] = pick(p[key], idx); });
      return Object.assign({}, source, { points: points });
    }

    function downloadCSV() {
      if (!series) return;
      const p = series.points;
      const columns = ["date", "run", "sha", "branch", "median", "q1", "q3", "n", "env", "message"];
      const quote = (v) => {
        const text = v == null ? "" : String(v);
        return /[",\n\r]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
      };
      const idx = selectedIndexes(p, controls.branch.value);
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

    // The newest part of the trend is drawn at once as a plain SVG from the small trend file;
    // the whole history and Plotly (the heaviest script of the site) are loaded only when the
    // reader points at the chart or changes a control, so a first visit never waits for them.
    let interactive = null;
    function makeInteractive() {
      if (!interactive) {
        interactive = Promise.all([loadScript(element.dataset.plotly),
                                   load(element.dataset.series)]).then(([, loaded]) => {
          series = loaded;
          element.replaceChildren();
          element.classList.remove("trend-chart", "large");  // the static chart's styles
          return draw();
        }).then(() => {
          element.setAttribute("data-interactive", "1");
          element.on("plotly_click", (event) => {
            const url = event.points[0] && event.points[0].customdata;
            if (typeof url === "string" && HTTP_URL.test(url)) window.open(url, "_blank", "noopener");
          });
        }).catch((error) => showProblem(element, "Could not load the chart: " + error.message));
      }
      return interactive;
    }

    document.getElementById("download-csv").addEventListener("click", (event) => {
      event.preventDefault();
      load(element.dataset.series).then((loaded) => { series = loaded; downloadCSV(event); })
        .catch((error) => showProblem(element, "Could not load the data: " + error.message));
    });
    fetchJSON(element.dataset.trend).then((trend) => {
      drawTrend(element, trend);
      markRendered(element);
      element.addEventListener("pointerenter", makeInteractive);
      element.addEventListener("focus", makeInteractive);
      Object.values(controls).forEach((c) => c.addEventListener("change",
        () => (element.hasAttribute("data-interactive") ? draw() : makeInteractive())));
    }).catch((error) => showProblem(element, "Could not load the data: " + error.message));
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

    async function render() {
      const chosen = selects.map((s) => runs.find((r) => r.run === s.value));
      const [a, b] = await Promise.all(chosen.map((r) => fetchJSON(root + r.file)));
      showRun("a", chosen[0]);
      showRun("b", chosen[1]);
      const values = [new Map(), new Map()];
      [a, b].forEach((doc, k) => doc.values.forEach(([pos, median, status]) =>
        values[k].set(pos, { median: median, status: status })));
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
        const show = (v) => v == null ? "—" : v.median == null ? v.status : formatNumber(v.median);
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
                   cell(bench.unit), cell(show(va), "num"),
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
