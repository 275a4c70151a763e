#!/usr/bin/env python3
"""Draws BENCHMARKS.md's charts and docs/operations.md's dashboard picture as SVG.

Every number comes from a run file in bench/results/ (the same files BENCHMARKS.md's tables
quote); nothing is typed in here but the names of those files. Python 3 standard library only.

    python3 bench/charts.py                      # redraw into bench/charts/
    python3 bench/charts.py --out /tmp/charts    # elsewhere
    python3 bench/charts.py --dashboard-data target/dashboard-ranges.json   # the dashboard from a new
                                                 # DashboardPrometheusIntegrationTests run
    python3 bench/charts.py --check              # draw into a temp dir and parse every SVG (CI)
"""
import argparse
import glob
import html
import json
import os
import re
import sys
import tempfile
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "bench", "results")
DASHBOARD = os.path.join(ROOT, "helm", "leasehold", "files", "grafana-dashboard.json")

# The runs BENCHMARKS.md's tables come from (change these when a new run replaces one there).
SINGLE_NODE_RUN = "2026-12-02-side-by-side-run4.md"
CLUSTER_ETCD_RUNS = ["2026-12-04-cluster-etcd-final-run%d.txt" % i for i in (1, 2, 3)]
GO_CLIENT_RUN = "2026-12-05-go-client.txt"
DASHBOARD_RUN_GLOB = "*-dashboard-ranges.json"  # the newest one is drawn

COLORS = ["#2f6db5", "#e07b39", "#3a9a5b", "#c0392b", "#8e6bbf", "#8c6d31", "#d15fa6", "#5f7f8f"]
FONT = 'font-family="DejaVu Sans, Helvetica, Arial, sans-serif"'


# ---------------------------------------------------------------- reading the run files

def markdown_table(path):
    """The Bench table of a run file: (target names, {measure: [cell per target]}); ratio columns dropped."""
    targets, rows = None, {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line.startswith("|") or line.startswith("|---"):
                continue
            cells = [c.strip() for c in line.strip("|").split("|")]
            if cells[0] == "measure":
                keep = [i for i, c in enumerate(cells) if i > 0 and "÷" not in c]
                targets = [cells[i] for i in keep]
            elif targets is not None:
                rows[cells[0]] = [cells[i] for i in keep]
    if targets is None:
        raise ValueError("no Bench table in " + path)
    return targets, rows


def row(rows, prefix, path):
    for k, v in rows.items():
        if k.startswith(prefix):
            return v
    raise ValueError("no row starting %r in %s" % (prefix, path))


def number(cell, part=0):
    """'1,968' -> 1968.0; '196.7 / 810.5' part 1 -> 810.5; '1.0000 (4833..4857)' -> 1.0."""
    text = cell.split("/")[part].strip().split(" ")[0].replace(",", "")
    return float(text)


def single_node(results):
    path = os.path.join(results, SINGLE_NODE_RUN)
    targets, rows = markdown_table(path)
    w1 = [number(c) for c in row(rows, "W1 sync: pairs/s", path)]
    acq = row(rows, "W1 sync: acquire p50 / p99", path)
    w2 = [number(c) for c in row(rows, "W2: hand-offs/s", path)]
    return figure("Single node beside Redis — " + SINGLE_NODE_RUN, [
        bars("W1 sync: lock + unlock pairs/s (16 threads) — higher is better", targets, [("pairs/s", w1)]),
        bars("W1 sync: acquire latency, µs — lower is better", targets,
             [("p50", [number(c, 0) for c in acq]), ("p99", [number(c, 1) for c in acq])]),
        bars("W2: hand-offs/s, 16 workers on one key — higher is better", targets, [("hand-offs/s", w2)]),
    ])


def cluster_etcd(results):
    runs = []
    for name in CLUSTER_ETCD_RUNS:
        path = os.path.join(results, name)
        targets, rows = markdown_table(path)
        runs.append((path, targets, rows))
    targets = runs[0][1]
    labels = ["run %d" % (i + 1) for i in range(len(runs))]

    def series(prefix, part=0, scale=1.0):
        return [(t, [number(row(rows, prefix, p)[i], part) * scale for p, _, rows in runs])
                for i, t in enumerate(targets)]

    return figure("3-node cluster beside etcd, warm — %s (%d runs)"
                  % (os.path.commonprefix(CLUSTER_ETCD_RUNS) + "*", len(runs)), [
        bars("W1 sync: pairs/s (16 threads) — higher is better", labels, series("W1 sync: pairs/s")),
        bars("W1 sync: acquire p99, ms — lower is better", labels,
             series("W1 sync: acquire p50 / p99", 1, 0.001)),
        bars("W2: hand-offs/s, 16 workers on one key — higher is better", labels, series("W2: hand-offs/s")),
    ])


def duration_us(value, unit):
    return float(value) * {"us": 1, "µs": 1, "ms": 1000, "s": 1e6}[unit]


def go_java(results):
    path = os.path.join(results, GO_CLIENT_RUN)
    java = {"w1": [], "p99": [], "w2": []}
    go = {"w1": [], "p99": [], "w2": []}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"java:\s+client\s+W1 sync\s+(\d+) pairs/s .*? p99\s+([\d.]+) us", line)
            if m:
                java["w1"].append(float(m.group(1)))
                java["p99"].append(float(m.group(2)))
            m = re.match(r"java:\s+client\s+W2\s+\d+ acquisitions/s\s+(\d+) hand-offs/s", line)
            if m:
                java["w2"].append(float(m.group(1)))
            m = re.match(r"go:\s+W1 sync .*?: (\d+) pairs/s, .*? p99 ([\d.]+)(µs|ms|s)\b", line)
            if m:
                go["w1"].append(float(m.group(1)))
                go["p99"].append(duration_us(m.group(2), m.group(3)))
            m = re.match(r"go:\s+W2 .*?: (\d+) hand-offs/s", line)
            if m:
                go["w2"].append(float(m.group(1)))
    rounds = len(java["w1"])
    if rounds == 0 or any(len(v) != rounds for v in list(java.values()) + list(go.values())):
        raise ValueError("unexpected Java/Go rounds in " + path)
    labels = ["round %d" % (i + 1) for i in range(rounds)]
    return figure("Go client beside Java client, one server — " + GO_CLIENT_RUN, [
        bars("W1 sync: pairs/s (16 threads / goroutines) — higher is better", labels,
             [("Java client", java["w1"]), ("Go client", go["w1"])]),
        bars("W1 sync: acquire p99, µs — lower is better", labels,
             [("Java client", java["p99"]), ("Go client", go["p99"])]),
        bars("W2: hand-offs/s, 16 workers on one key — higher is better", labels,
             [("Java client", java["w2"]), ("Go client", go["w2"])]),
    ])


# ---------------------------------------------------------------- drawing

def esc(s):
    return html.escape(str(s), quote=True)


def fmt(v):
    if v >= 100:
        return "{:,.0f}".format(v)
    if v >= 10:
        return "{:.1f}".format(v)
    return "{:.2f}".format(v)


def bars(title, categories, series, width=760):
    """A horizontal grouped bar panel: one group per category, one bar per series. Returns (height, svg body)."""
    label_w, bar_h, gap = 230, 14, 10
    top = 40 if len(series) > 1 else 24
    group_h = bar_h * len(series) + gap
    height = top + group_h * len(categories) + 8
    vmax = max(max(vals) for _, vals in series) or 1.0
    plot_w = width - label_w - 80
    out = ['<text x="0" y="14" font-size="13" font-weight="bold">%s</text>' % esc(title)]
    if len(series) > 1:
        x = label_w
        for s, (name, _) in enumerate(series):
            out.append('<rect x="%d" y="22" width="10" height="10" fill="%s"/>' % (x, COLORS[s % len(COLORS)]))
            out.append('<text x="%d" y="31" font-size="11">%s</text>' % (x + 14, esc(name)))
            x += 24 + 6 * len(name)
    for c, cat in enumerate(categories):
        y0 = top + c * group_h
        out.append('<text x="%d" y="%d" font-size="11" text-anchor="end">%s</text>'
                   % (label_w - 6, y0 + (group_h - gap) / 2 + 4, esc(cat)))
        for s, (name, vals) in enumerate(series):
            w = max(1.0, plot_w * vals[c] / vmax)
            y = y0 + s * bar_h
            out.append('<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"><title>%s, %s: %s</title></rect>'
                       % (label_w, y, w, bar_h - 2, COLORS[s % len(COLORS)], esc(cat), esc(name), fmt(vals[c])))
            out.append('<text x="%.1f" y="%d" font-size="10">%s</text>' % (label_w + w + 4, y + bar_h - 4, fmt(vals[c])))
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#888"/>' % (label_w, top - 2, label_w, height - 6))
    return height, "\n".join(out)


def figure(title, panels, width=780):
    """Panels stacked under a title, as one SVG document."""
    y = 34
    body = []
    for h, svg in panels:
        body.append('<g transform="translate(10,%d)">\n%s\n</g>' % (y, svg))
        y += h + 14
    return svg_doc(width, y, '<text x="10" y="20" font-size="15" font-weight="bold">%s</text>\n%s'
                   % (esc(title), "\n".join(body)))


def svg_doc(width, height, body):
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" %s>\n'
            '<rect width="100%%" height="100%%" fill="white"/>\n%s\n</svg>\n'
            % (width, height, width, height, FONT, body))


# ---------------------------------------------------------------- the dashboard

def series_name(expr, metric, n_targets):
    labels = ", ".join("%s=%s" % (k, v) for k, v in sorted(metric.items()) if k not in ("__name__",))
    q = re.match(r"histogram_quantile\(([\d.]+)", expr)
    prefix = "p%g" % (float(q.group(1)) * 100) if q else ""
    if not prefix and n_targets > 1:
        m = re.search(r"(leasehold_\w+|process_\w+|jvm_\w+)", expr)
        prefix = m.group(1) if m else ""
    name = " ".join(p for p in (prefix, labels) if p) or "value"
    return name.replace("leasehold_", "").replace("instance=127.0.0.1:", "port ")


def dashboard(data_path):
    with open(DASHBOARD, encoding="utf-8") as f:
        dash = json.load(f)
    with open(data_path, encoding="utf-8") as f:
        data = json.load(f)
    answers = {q["expr"]: q["answer"] for q in data["queries"]}
    start, end = data["start"], data["end"]
    unit_w, unit_h, width = 40, 22, 24 * 40 + 20
    out, y, row_y, row_top = [], 60, None, 0
    panels = sorted(dash["panels"], key=lambda p: (p["gridPos"]["y"], p["gridPos"]["x"]))
    drawn = 0
    for p in panels:
        g = p["gridPos"]
        if p.get("type") == "row":
            if row_y is not None:
                y = row_top
            out.append('<text x="10" y="%d" font-size="14" font-weight="bold">%s</text>' % (y + 16, esc(p["title"])))
            out.append('<line x1="10" y1="%d" x2="%d" y2="%d" stroke="#bbb"/>' % (y + 22, width - 10, y + 22))
            row_y, y = g["y"] + g["h"], y + 28
            row_top = y
            continue
        px = 10 + g["x"] * unit_w
        py = y + (g["y"] - row_y) * unit_h
        pw, ph = g["w"] * unit_w - 10, g["h"] * unit_h - 10
        row_top = max(row_top, py + ph + 10)
        out.append(panel(p, answers, start, end, data.get("events", []), px, py, pw, ph))
        drawn += 1
    if drawn == 0:
        raise ValueError("no panels in " + DASHBOARD)
    title = "Leasehold dashboard: every panel's queries on a real Prometheus (%s, %d s)" % (
        os.path.basename(data_path), end - start)
    note = ("load on a single node and a 3-node cluster; then the cluster's leader and a follower stopped, "
            "then one node restarted (dashed marks). x: seconds from the start")
    return svg_doc(width, row_top + 10, '<text x="10" y="24" font-size="15" font-weight="bold">%s</text>\n'
                   '<text x="10" y="44" font-size="11" fill="#555">%s</text>\n%s'
                   % (esc(title), esc(note), "\n".join(out)))


def panel(p, answers, start, end, events, x, y, w, h):
    out = ['<g transform="translate(%d,%d)">' % (x, y),
           '<rect width="%d" height="%d" fill="#fafafa" stroke="#ccc"/>' % (w, h),
           '<text x="6" y="14" font-size="11" font-weight="bold">%s</text>' % esc(p["title"])]
    lines = []
    targets = p.get("targets", [])
    for t in targets:
        answer = answers.get(t["expr"])
        if not isinstance(answer, dict) or answer.get("status") != "success":
            continue
        for r in answer["data"]["result"]:
            pts = [(float(ts), float(v)) for ts, v in r["values"]]
            lines.append((series_name(t["expr"], r["metric"], len(targets)), pts))
    finite = [v for _, pts in lines for _, v in pts if v == v and abs(v) != float("inf")]
    left, top, right, bottom = 44, 22, w - 6, h - 30
    if not finite:
        out.append('<text x="%d" y="%d" font-size="11" fill="#999" text-anchor="middle">no data</text>'
                   % (w / 2, h / 2))
        out.append("</g>")
        return "\n".join(out)
    lo, hi = min(0.0, min(finite)), max(finite)
    if hi == lo:
        hi = lo + 1
    sx = lambda t: left + (right - left) * (t - start) / max(1, end - start)
    sy = lambda v: bottom - (bottom - top) * (v - lo) / (hi - lo)
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#999"/>' % (left, bottom, right, bottom))
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#999"/>' % (left, top, left, bottom))
    out.append('<text x="%d" y="%d" font-size="9" text-anchor="end">%s</text>' % (left - 3, top + 8, esc(short(hi))))
    out.append('<text x="%d" y="%d" font-size="9" text-anchor="end">%s</text>' % (left - 3, bottom, esc(short(lo))))
    out.append('<text x="%d" y="%d" font-size="9">0</text>' % (left, bottom + 10))
    out.append('<text x="%d" y="%d" font-size="9" text-anchor="end">%d s</text>' % (right, bottom + 10, end - start))
    for e in events:
        ex = sx(e["at"])
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#aaa" stroke-dasharray="3,2"><title>%s</title></line>'
                   % (ex, top, ex, bottom, esc(e["what"])))
    step = min((b[0] - a[0] for _, pts in lines for a, b in zip(pts, pts[1:])), default=1)
    for i, (name, pts) in enumerate(lines):
        color = COLORS[i % len(COLORS)]
        segs, cur, last = [], [], None
        for t, v in pts:
            if v != v or abs(v) == float("inf") or (last is not None and t - last > 1.5 * step):
                segs.append(cur)  # NaN, or the series was absent (a node down): a gap, not a line across it
                cur = []
            if v == v and abs(v) != float("inf"):
                cur.append("%.1f,%.1f" % (sx(t), sy(v)))
            last = t
        segs.append(cur)
        for s in segs:
            if len(s) == 1:
                cx, cy = s[0].split(",")
                out.append('<circle cx="%s" cy="%s" r="1.5" fill="%s"/>' % (cx, cy, color))
            elif s:
                out.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="1.3"/>' % (" ".join(s), color))
    shown = min(3, len(lines))
    slot = (w - (52 if len(lines) > 3 else 12)) / shown
    for i, (name, _) in enumerate(lines[:shown]):
        chars = int(slot / 5.2)
        label = name if len(name) <= chars else name[:chars - 1] + "…"
        out.append('<text x="%.1f" y="%d" font-size="8.5" fill="%s">%s</text>'
                   % (6 + slot * i, h - 6, COLORS[i % len(COLORS)], esc(label)))
    if len(lines) > 3:
        out.append('<text x="%d" y="%d" font-size="8.5" text-anchor="end" fill="#555">+%d more</text>'
                   % (w - 4, h - 6, len(lines) - 3))
    out.append("</g>")
    return "\n".join(out)


def short(v):
    a = abs(v)
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if a >= div:
            return "%.3g%s" % (v / div, suffix)
    if a and a < 0.01:
        return "%.2g" % v
    return "%.3g" % v


# ---------------------------------------------------------------- main

def draw(out_dir, results, dashboard_data):
    os.makedirs(out_dir, exist_ok=True)
    files = {
        "single-node.svg": single_node(results),
        "cluster-etcd.svg": cluster_etcd(results),
        "go-java-client.svg": go_java(results),
    }
    if dashboard_data is None:
        found = sorted(glob.glob(os.path.join(results, DASHBOARD_RUN_GLOB)))
        dashboard_data = found[-1] if found else None
    if dashboard_data is not None:
        files["dashboard.svg"] = dashboard(dashboard_data)
    for name, svg in files.items():
        with open(os.path.join(out_dir, name), "w", encoding="utf-8") as f:
            f.write(svg)
    return [os.path.join(out_dir, n) for n in files]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "charts"), help="directory for the SVG files")
    ap.add_argument("--results", default=RESULTS, help="directory of the run files (bench/results)")
    ap.add_argument("--dashboard-data", help="a dashboard-ranges.json saved by DashboardPrometheusIntegrationTests "
                                             "(default: the newest bench/results/*-dashboard-ranges.json)")
    ap.add_argument("--check", action="store_true", help="draw into a temporary directory and parse every SVG")
    args = ap.parse_args()
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            written = draw(tmp, args.results, args.dashboard_data)
            for path in written:
                root = ET.parse(path).getroot()  # raises on malformed XML
                shapes = [e for e in root.iter() if e.tag.endswith("}rect") or e.tag.endswith("}polyline")]
                if not root.tag.endswith("}svg") or len(shapes) < 5:
                    sys.exit("charts.py --check: %s is not a drawn SVG chart" % os.path.basename(path))
            if not any(p.endswith("dashboard.svg") for p in written):
                sys.exit("charts.py --check: no dashboard data in %s" % args.results)
            print("charts.py --check: %d well-formed SVG charts (%s)"
                  % (len(written), ", ".join(os.path.basename(p) for p in written)))
        return
    for path in draw(args.out, args.results, args.dashboard_data):
        print("wrote " + os.path.relpath(path, os.getcwd()))


if __name__ == "__main__":
    main()
