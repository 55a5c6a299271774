"""Heatmaps: a confusion matrix with counts in the cells, shaded by share of the row."""

from __future__ import annotations

from judgekit.report.escape import esc, fmt_int, is_num
from judgekit.report.svg.draw import (
    INK,
    MUTED,
    clip,
    coord,
    no_data,
    open_svg,
    svg_text,
    text_width,
)

__all__ = ["heatmap"]


def _mix(share: float) -> str:
    """White → dark blue by ``share`` in [0, 1]."""
    s = min(max(share, 0.0), 1.0)
    lo, hi = (255, 255, 255), (8, 69, 148)
    r, g, b = (round(a + (z - a) * s) for a, z in zip(lo, hi, strict=True))
    return f"#{r:02x}{g:02x}{b:02x}"


def heatmap(
    matrix: list[list[int]],
    *,
    row_labels: list[str],
    col_labels: list[str],
    title: str,
    row_title: str = "reference",
    col_title: str = "judge",
) -> str:
    """A confusion matrix as a heatmap: counts written in the cells.

    Rows are the reference (true) labels, columns the judge's. A cell's shade is its share of
    the row (so a dark diagonal means high recall per class); the diagonal is outlined and each
    row's total is written at the right.

    Example: ``heatmap([[50, 2], [5, 40]], row_labels=["comply", "refuse"],
    col_labels=["comply", "refuse"], title="gpt4 vs final")``.
    """
    n_r, n_c = len(matrix), (len(matrix[0]) if matrix else 0)
    if len(row_labels) != n_r or len(col_labels) != n_c or any(len(r) != n_c for r in matrix):
        raise ValueError(
            f"heatmap: matrix is {n_r}x{n_c} but got {len(row_labels)} row labels and "
            f"{len(col_labels)} column labels (and every row must have {n_c} cells)."
        )
    row_txt = [clip(r, 32) for r in row_labels]
    col_txt = [clip(c, 24) for c in col_labels]
    cell_w = max(64.0, min(170.0, max((text_width(c, 11) for c in col_txt), default=0) + 14))
    cell_h = 40.0
    left = 34 + max(60.0, max((text_width(r, 12) for r in row_txt), default=0) + 12)
    top = 74.0
    width = left + n_c * cell_w + 70
    # wide enough for the title (drawn centred at 14px) and the column title: never clipped
    width = max(width, text_width(clip(title, 110), 14) * 1.1 + 32, text_width(f"{col_title} →", 12) * 1.1 + 32)
    height = top + n_r * cell_h + 22
    parts = open_svg(width, height, title)
    parts.append(svg_text(left + n_c * cell_w / 2, 44, f"{col_title} →", anchor="middle", fill=MUTED, weight="600"))
    ymid = top + n_r * cell_h / 2
    parts.append(svg_text(16, ymid, f"{row_title} →", anchor="middle", fill=MUTED, weight="600",
                      extra=f' transform="rotate(90 16 {coord(ymid)})"'))
    for j, c in enumerate(col_txt):
        parts.append(svg_text(left + (j + 0.5) * cell_w, top - 10, c, anchor="middle", size=11,
                          tip=col_labels[j] if c != col_labels[j] else None))
    parts.append(svg_text(left + n_c * cell_w + 35, top - 10, "n", anchor="middle", size=11, fill=MUTED))
    for i, row in enumerate(matrix):
        counts = [int(v) if is_num(v) else 0 for v in row]
        total = sum(counts)
        y = top + i * cell_h
        parts.append(svg_text(left - 8, y + cell_h / 2 + 4, row_txt[i], anchor="end",
                          tip=row_labels[i] if row_txt[i] != row_labels[i] else None))
        for j, v in enumerate(counts):
            share = v / total if total else 0.0
            x = left + j * cell_w
            tip = f"{row_title} {row_labels[i]}, {col_title} {col_labels[j]}: {v} ({100 * share:.1f}% of row)"
            parts.append(
                f'<rect x="{coord(x)}" y="{coord(y)}" width="{coord(cell_w)}" height="{coord(cell_h)}" '
                f'fill="{_mix(share)}" stroke="#ffffff" stroke-width="1"><title>{esc(tip)}</title></rect>'
            )
            ink = "#ffffff" if share > 0.55 else INK
            parts.append(svg_text(x + cell_w / 2, y + cell_h / 2 + 1, fmt_int(v), anchor="middle", size=13,
                              fill=ink, weight="600"))
            if total:
                parts.append(svg_text(x + cell_w / 2, y + cell_h / 2 + 14, f"{100 * share:.0f}%", anchor="middle",
                                  size=9.5, fill=ink))
            if i == j:
                parts.append(f'<rect x="{coord(x + 1.5)}" y="{coord(y + 1.5)}" width="{coord(cell_w - 3)}" '
                             f'height="{coord(cell_h - 3)}" fill="none" stroke="{INK}" stroke-width="1.5"/>')
        parts.append(svg_text(left + n_c * cell_w + 35, y + cell_h / 2 + 4, fmt_int(total), anchor="middle",
                          size=11, fill=MUTED))
    if not n_r:
        no_data(parts, width / 2, top + 10)
    parts.append("</svg>")
    return "".join(parts)
