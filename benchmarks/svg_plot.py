"""Small SVG charts for the benchmark pages, without a plotting library.

Why: the benchmarks must draw their own figures (docs/benchmarks.md) and matplotlib is no
dependency of constrain. Two charts cover what the pages show: the distribution of per-token
latencies on a log axis (an empirical CDF, or a histogram of log-width bins) for a few engines,
and a grouped horizontal bar chart (coverage per keyword, per engine). The output is plain,
deterministic SVG text (same data, same bytes), with at most a few hundred points per series so
that a page's figures stay small.
"""

from __future__ import annotations

import math
from html import escape
from pathlib import Path
from typing import Mapping, Optional, Sequence, Union

# One colour per series, in order (ours first): colour-blind-safe (Okabe-Ito).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00")
FONT = "Helvetica, Arial, DejaVu Sans, sans-serif"
MAX_POINTS = 240  # points per CDF series: quantiles, not every sample

PathLike = Union[str, Path]


class Canvas:
    """An SVG document being assembled: elements as text lines, numbers rounded to 0.1 px."""

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.parts: list[str] = []

    def line(self, x1: float, y1: float, x2: float, y2: float, color: str = "#000", width: float = 1,
             dash: str = "") -> None:
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        self.parts.append(f'<line x1="{_n(x1)}" y1="{_n(y1)}" x2="{_n(x2)}" y2="{_n(y2)}" '
                          f'stroke="{color}" stroke-width="{_n(width)}"{extra}/>')

    def polyline(self, points: Sequence[tuple[float, float]], color: str, width: float = 1.8) -> None:
        pts = " ".join(f"{_n(x)},{_n(y)}" for x, y in points)
        self.parts.append(f'<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="{_n(width)}" '
                          f'stroke-linejoin="round"/>')

    def rect(self, x: float, y: float, w: float, h: float, color: str, title: str = "") -> None:
        tip = f"<title>{escape(title)}</title>" if title else ""
        self.parts.append(f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(max(w, 0))}" height="{_n(h)}" '
                          f'fill="{color}">{tip}</rect>')

    def text(self, x: float, y: float, s: str, size: int = 12, anchor: str = "start", weight: str = "normal",
             color: str = "#222", rotate: Optional[float] = None) -> None:
        rot = f' transform="rotate({_n(rotate)} {_n(x)} {_n(y)})"' if rotate is not None else ""
        bold = ' font-weight="bold"' if weight != "normal" else ""
        self.parts.append(f'<text x="{_n(x)}" y="{_n(y)}" font-size="{size}" text-anchor="{anchor}" '
                          f'fill="{color}"{bold}{rot}>{escape(s)}</text>')

    def svg(self) -> str:
        head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" height="{self.height}" '
                f'viewBox="0 0 {self.width} {self.height}" font-family="{FONT}">')
        return "\n".join([head, f'<rect width="{self.width}" height="{self.height}" fill="#fff"/>',
                          *self.parts, "</svg>", ""])


def _n(x: float) -> str:
    """A coordinate as short text: 0.1 px is finer than any screen needs."""
    s = f"{x:.1f}"
    return s[:-2] if s.endswith(".0") else s


def _legend(c: Canvas, names: Sequence[str], x: float, y: float) -> None:
    for i, name in enumerate(names):
        yy = y + 16 * i
        c.rect(x, yy - 9, 14, 10, PALETTE[i % len(PALETTE)])
        c.text(x + 20, yy, name, 12)


def _log_ticks(lo: float, hi: float) -> list[float]:
    """1, 2, 5 × powers of ten within [lo, hi] (only powers of ten past four decades)."""
    steps = (1,) if math.log10(hi / lo) > 4 else (1, 2, 5)
    out = []
    for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        for m in steps:
            v = m * 10.0 ** e
            if lo <= v <= hi:
                out.append(v)
    return out


def _tick_label(v: float) -> str:
    if v >= 1000:
        return f"{v / 1000:g}k"
    return f"{v:g}"


def _log_range(series: Mapping[str, Sequence[float]]) -> tuple[float, float]:
    values = [v for xs in series.values() for v in xs if v > 0]
    if not values:
        raise ValueError("no positive values to plot: a log axis needs at least one sample above 0")
    lo, hi = min(values), max(values)
    lo = 10.0 ** math.floor(math.log10(lo))
    hi = 10.0 ** math.ceil(math.log10(hi))
    if hi <= lo:
        hi = lo * 10
    return lo, hi


def _quantile_points(xs: Sequence[float]) -> list[tuple[float, float]]:
    """The empirical CDF as (value, fraction ≤ value) at no more than MAX_POINTS quantiles."""
    s = sorted(v for v in xs if v > 0)
    n = len(s)
    if n == 0:
        return []
    idx = sorted({min(n - 1, round(i * (n - 1) / (MAX_POINTS - 1))) for i in range(MAX_POINTS)}) if n > MAX_POINTS \
        else list(range(n))
    return [(s[i], (i + 1) / n) for i in idx]


def latency_cdf(series: Mapping[str, Sequence[float]], path: PathLike, *, title: str,
                xlabel: str = "µs per mask (log scale)", width: int = 880, height: int = 380) -> Path:
    """Empirical CDFs of positive samples, one line per series, on a log x axis: how often a
    mask took at most x. The median and p99 are marked per series in the legend."""
    lo, hi = _log_range(series)
    left, right, top, bottom = 60, 290, 36, 50
    pw, ph = width - left - right, height - top - bottom
    c = Canvas(width, height)
    c.text(left + pw / 2, 20, title, 14, "middle", "bold")

    def x_of(v: float) -> float:
        return left + pw * (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))

    def y_of(f: float) -> float:
        return top + ph * (1 - f)

    for v in _log_ticks(lo, hi):
        c.line(x_of(v), top, x_of(v), top + ph, "#ddd")
        c.text(x_of(v), top + ph + 16, _tick_label(v), 11, "middle")
    for f in (0, 0.25, 0.5, 0.75, 0.9, 1.0):
        c.line(left, y_of(f), left + pw, y_of(f), "#eee")
        c.text(left - 6, y_of(f) + 4, f"{f:g}", 11, "end")
    for f, label in ((0.5, "p50"), (0.99, "p99")):  # the quantiles the tables quote, labelled on the right
        c.line(left, y_of(f), left + pw, y_of(f), "#999", dash="4 3")
        c.text(left + pw + 4, y_of(f) + 4, label, 10, color="#666")
    c.line(left, top + ph, left + pw, top + ph)
    c.line(left, top, left, top + ph)
    c.text(left + pw / 2, height - 12, xlabel, 12, "middle")
    c.text(16, top + ph / 2, "fraction of masks ≤ x", 12, "middle", rotate=-90)

    labels = []
    for i, (name, xs) in enumerate(series.items()):
        pts = _quantile_points(xs)
        if not pts:
            labels.append(f"{name} (no data)")
            continue
        color = PALETTE[i % len(PALETTE)]
        steps: list[tuple[float, float]] = [(x_of(pts[0][0]), y_of(0))]
        prev_f = 0.0
        for v, f in pts:
            steps += [(x_of(v), y_of(prev_f)), (x_of(v), y_of(f))]
            prev_f = f
        c.polyline(steps, color)
        s = sorted(xs)
        labels.append(f"{name}: p50 {_fmt(_pct(s, 50))}, p99 {_fmt(_pct(s, 99))}")
    _legend(c, labels, left + pw + 34, top + 60)
    return _write(c, path)


def latency_histogram(series: Mapping[str, Sequence[float]], path: PathLike, *, title: str,
                      xlabel: str = "µs per mask (log scale)", bins_per_decade: int = 10,
                      width: int = 720, height: int = 340) -> Path:
    """Histograms of positive samples over log-width bins, drawn as step outlines (one per
    series, share of that series' samples per bin) so that overlapping engines stay readable."""
    lo, hi = _log_range(series)
    left, right, top, bottom = 60, 150, 36, 50
    pw, ph = width - left - right, height - top - bottom
    nbins = max(1, round(bins_per_decade * math.log10(hi / lo)))
    shares: list[list[float]] = []
    for xs in series.values():
        counts = [0] * nbins
        pos = [v for v in xs if v > 0]
        for v in pos:
            b = int(nbins * math.log10(v / lo) / math.log10(hi / lo))
            counts[min(max(b, 0), nbins - 1)] += 1
        shares.append([k / len(pos) if pos else 0.0 for k in counts])
    top_share = max((s for row in shares for s in row), default=0.0) or 1.0
    ymax = math.ceil(top_share * 10) / 10

    c = Canvas(width, height)
    c.text(width / 2, 20, title, 14, "middle", "bold")

    def x_of_bin(b: float) -> float:
        return left + pw * b / nbins

    def y_of(s: float) -> float:
        return top + ph * (1 - s / ymax)

    for v in _log_ticks(lo, hi):
        x = left + pw * math.log10(v / lo) / math.log10(hi / lo)
        c.line(x, top, x, top + ph, "#eee")
        c.text(x, top + ph + 16, _tick_label(v), 11, "middle")
    for k in range(6):
        s = ymax * k / 5
        c.line(left, y_of(s), left + pw, y_of(s), "#eee")
        c.text(left - 6, y_of(s) + 4, f"{100 * s:.0f}%", 11, "end")
    c.line(left, top + ph, left + pw, top + ph)
    c.line(left, top, left, top + ph)
    c.text(left + pw / 2, height - 12, xlabel, 12, "middle")
    c.text(16, top + ph / 2, "share of masks", 12, "middle", rotate=-90)
    for i, row in enumerate(shares):
        pts: list[tuple[float, float]] = [(x_of_bin(0), y_of(0))]
        for b, s in enumerate(row):
            pts += [(x_of_bin(b), y_of(s)), (x_of_bin(b + 1), y_of(s))]
        pts.append((x_of_bin(nbins), y_of(0)))
        c.polyline(pts, PALETTE[i % len(PALETTE)], 1.6)
    _legend(c, list(series), left + pw + 14, top + 12)
    return _write(c, path)


def grouped_bars(categories: Sequence[str], series: Mapping[str, Sequence[Optional[float]]], path: PathLike, *,
                 title: str, xlabel: str = "%", xmax: float = 100.0, width: int = 720,
                 row_height: int = 0) -> Path:
    """Horizontal grouped bars: one row per category, one bar per series (None: no bar, and a
    dash where the value would be). Horizontal, so that long category names stay readable."""
    n = max(1, len(series))
    bar = 5 if n > 2 else 7
    row_height = row_height or (bar * n + 6)
    left = 14 + 6.6 * max((len(s) for s in categories), default=4)
    right, top, bottom = 20, 52, 40
    pw = width - left - right
    height = int(top + bottom + row_height * len(categories))
    c = Canvas(width, height)
    c.text(width / 2, 20, title, 14, "middle", "bold")
    names = list(series)
    for i, name in enumerate(names):  # legend in one line under the title
        x = left + i * (pw / n)
        c.rect(x, 31, 14, 10, PALETTE[i % len(PALETTE)])
        c.text(x + 20, 40, name, 12)

    def x_of(v: float) -> float:
        return left + pw * min(max(v, 0.0), xmax) / xmax

    for k in range(11):
        v = xmax * k / 10
        c.line(x_of(v), top, x_of(v), height - bottom, "#eee")
        c.text(x_of(v), height - bottom + 14, f"{v:g}", 10, "middle")
    c.text(left + pw / 2, height - 10, xlabel, 12, "middle")
    for r, cat in enumerate(categories):
        y0 = top + r * row_height + 3
        c.text(left - 6, y0 + (row_height - 6) / 2 + 4, cat, 11, "end")
        for i, name in enumerate(names):
            v = series[name][r]
            y = y0 + i * bar
            if v is None:
                c.text(left + 2, y + bar, "–", 8, color="#999")
                continue
            c.rect(left, y, x_of(v) - left, bar - 1, PALETTE[i % len(PALETTE)], f"{cat} · {name}: {v:.1f}")
    c.line(left, top, left, height - bottom)
    return _write(c, path)


def _pct(sorted_xs: Sequence[float], q: float) -> float:
    if not sorted_xs:
        return float("nan")
    i = min(len(sorted_xs) - 1, max(0, math.ceil(q / 100 * len(sorted_xs)) - 1))
    return sorted_xs[i]


def _fmt(v: float) -> str:
    if v != v:
        return "-"
    if v >= 1000:
        return f"{v / 1000:.1f} ms"
    return f"{v:.0f} µs" if v >= 100 else f"{v:.1f} µs" if v >= 10 else f"{v:.2f} µs"


def _write(c: Canvas, path: PathLike) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(c.svg(), encoding="utf-8")
    return p
