"""Statistics of caption sets in the official RoCOCO format (generated or official, same code).

Every altered caption is compared with its original word by word (bare lower-case
words, punctuation ignored, so the official files' lower-casing and re-tokenised
punctuation do not count as edits):

- one_word_pct: share of altered captions that differ from the original in exactly one word;
- pos_pct: part of speech of the replaced word (noun / verb / adj / adv / other), read in
  the original caption's context with the same WordNet rules that pick nouns;
- distinct_replacements: how many different new words the set uses;
- top_replaced / top_replacements: the most frequently replaced / inserted words;
- mean_cosine: mean cosine(original, altered) of the scorer's text embeddings.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from vlstress.suites.rococo_text.variants import caption_words

POS_NAMES = ("noun", "verb", "adj", "adv", "other")
TOP_N = 10


def split_entry(entry: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(originals, altered) of one official-format entry: first half, second half."""
    captions = list(entry["caption"])
    half = len(captions) // 2
    return captions[:half], captions[half : 2 * half]


def word_edit(
    original: str, altered: str
) -> tuple[bool, int | None, str | None, str | None, list[str]]:
    """(exactly one word replaced, index of the first changed original word, old word, new word,
    original words)."""
    a = [w for w in caption_words(original) if w]
    b = [w for w in caption_words(altered) if w]
    ops = [
        op
        for op in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
        if op[0] != "equal"
    ]
    one = (
        len(ops) == 1
        and ops[0][0] == "replace"
        and ops[0][2] - ops[0][1] == 1
        and ops[0][4] - ops[0][3] == 1
    )
    if not ops:
        return False, None, None, None, a
    tag, i1, i2, j1, j2 = ops[0]
    old = a[i1] if i2 > i1 else None
    new = b[j1] if j2 > j1 else None
    return one, (i1 if i2 > i1 else None), old, new, a


def part_of_speech(words: Sequence[str], index: int, word_classes) -> str:
    word = words[index]
    prev = words[index - 1] if index else None
    nxt = words[index + 1] if index + 1 < len(words) else None
    if word_classes.is_noun(word, prev, nxt):
        return "noun"
    if not word.isalpha():
        return "other"
    from vlstress.suites.rococo_text.nlp import stopwords

    if word in stopwords():
        return "other"
    counts = word_classes.pos_counts(word)
    best = max(("v", "a", "r"), key=lambda p: (counts[p], p == "v"))
    if counts[best] == 0:
        return "noun" if counts["n"] else "other"
    return {"v": "verb", "a": "adj", "r": "adv"}[best]


def set_stats(
    entries: list[dict[str, Any]],
    word_classes,
    cosine: Callable[[list[str], list[str]], np.ndarray] | None = None,
) -> dict[str, Any]:
    originals: list[str] = []
    altered: list[str] = []
    for entry in entries:
        entry_originals, entry_altered = split_entry(entry)
        originals += entry_originals
        altered += entry_altered
    n = len(altered)
    one_word = 0
    unchanged = 0
    pos: Counter[str] = Counter()
    replaced: Counter[str | None] = Counter()
    replacements: Counter[str] = Counter()
    for o, a in zip(originals, altered):
        one, index, old, new, words = word_edit(o, a)
        one_word += one
        if index is None and new is None:
            unchanged += 1
            continue
        if index is not None:
            pos[part_of_speech(words, index, word_classes)] += 1
            replaced[old] += 1
        if new is not None:
            replacements[new] += 1
    edited = max(sum(pos.values()), 1)
    stats = {
        "n_images": len(entries),
        "n_altered": n,
        "one_word_pct": round(100.0 * one_word / n, 4) if n else None,
        "unchanged": unchanged,
        "pos_pct": {p: round(100.0 * pos[p] / edited, 4) for p in POS_NAMES},
        "distinct_replaced": len(replaced),
        "distinct_replacements": len(replacements),
        "top_replaced": [
            [w, c] for w, c in sorted(replaced.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_N]
        ],
        "top_replacements": [
            [w, c] for w, c in sorted(replacements.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_N]
        ],
        "mean_cosine": None,
    }
    if cosine is not None and n:
        stats["mean_cosine"] = round(float(np.mean(cosine(originals, altered))), 6)
    return stats


def table_rows(results: dict[str, dict[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Flat rows (set, source) for the CSV / Markdown table."""
    rows = []
    for set_name in results:
        for source, s in results[set_name].items():
            rows.append(
                {
                    "set": set_name,
                    "source": source,
                    "images": s["n_images"],
                    "altered": s["n_altered"],
                    "one_word_%": s["one_word_pct"],
                    "noun_%": s["pos_pct"]["noun"],
                    "verb_%": s["pos_pct"]["verb"],
                    "adj_%": s["pos_pct"]["adj"],
                    "other_%": round(s["pos_pct"]["adv"] + s["pos_pct"]["other"], 4),
                    "distinct_replacements": s["distinct_replacements"],
                    "most_replaced": ", ".join(f"{w} ({c})" for w, c in s["top_replaced"][:5]),
                    "mean_cosine": s["mean_cosine"],
                }
            )
    return rows


def sample_note(results: dict[str, dict[str, dict[str, Any]]]) -> str:
    """`n = 70 altered captions of 14 images (same_concept, generated); ...`: what each bar counts,
    per set and source, grouped where the counts are the same."""
    groups: dict[tuple[Any, Any], list[str]] = {}
    for set_name, sources in results.items():
        for source, s in sources.items():
            key = (s.get("n_altered"), s.get("n_images"))
            groups.setdefault(key, []).append(f"{set_name}, {source}")
    parts = [
        f"n = {altered} altered captions of {images} images ({'; '.join(names)})"
        if altered is not None
        else f"n unknown ({'; '.join(names)})"
        for (altered, images), names in groups.items()
    ]
    return "Note: " + " | ".join(parts)


def plot(results: dict[str, dict[str, dict[str, Any]]], out_png, out_pdf) -> None:
    """Three panels, sets on x, generated and official side by side: one-word share, parts of
    speech, mean cosine."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    from vlstress.io import atomic_path

    set_names = list(results)
    sources = [
        src for src in ("generated", "official") if any(src in results[s] for s in set_names)
    ]
    sources += sorted({src for s in set_names for src in results[s]} - set(sources))
    width = 0.8 / len(sources)
    x = np.arange(len(set_names))
    hatches = ["", "//", "..", "xx"]
    source_colors = ["#4c72b0", "#dd8452", "#55a868", "#8172b3"]
    pos_colors = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8c8c8c"]
    fig, axes = plt.subplots(
        1, 3, figsize=(max(10, 3.2 * len(set_names)), 3.8), constrained_layout=True
    )
    for j, src in enumerate(sources):
        xs = x + (j - (len(sources) - 1) / 2) * width
        rows = [results[s].get(src) for s in set_names]
        one = [r["one_word_pct"] if r and r["one_word_pct"] is not None else np.nan for r in rows]
        cos = [r["mean_cosine"] if r and r["mean_cosine"] is not None else np.nan for r in rows]
        axes[0].bar(xs, one, width, color=source_colors[j % 4], label=src)
        axes[2].bar(xs, cos, width, color=source_colors[j % 4], label=src)
        bottom = np.zeros(len(rows))
        for name, color in zip(POS_NAMES, pos_colors):
            values = np.array([r["pos_pct"][name] if r else 0.0 for r in rows])
            axes[1].bar(
                xs,
                values,
                width,
                bottom=bottom,
                color=color,
                hatch=hatches[j % 4],
                edgecolor="white",
                linewidth=0.5,
            )
            bottom += values
    axes[0].set(title="exactly one word replaced", ylabel="% of altered captions", ylim=(0, 105))
    axes[1].set(title="part of speech of the replaced word", ylabel="%", ylim=(0, 100))
    axes[2].set(title="mean cosine(original, altered)", ylabel="scorer cosine")
    handles = [Patch(color=c, label=n) for n, c in zip(POS_NAMES, pos_colors)]
    handles += [
        Patch(facecolor="white", edgecolor="black", hatch=hatches[j % 4], label=src)
        for j, src in enumerate(sources)
    ]
    # below the panels, never over the bars
    axes[1].legend(
        handles=handles,
        fontsize=7,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.18),
        ncol=min(len(handles), 4),
        frameon=False,
    )
    axes[0].legend(
        fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2, frameon=False
    )
    for ax in axes:
        ax.set_xticks(x)
        ax.set_xticklabels([name.replace("_", "\n", 1) for name in set_names], fontsize=8)
    fig.suptitle(sample_note(results), fontsize=8, y=-0.02, va="top", color="0.3")
    for path, fmt in ((out_png, "png"), (out_pdf, "pdf")):
        with atomic_path(path) as tmp:
            fig.savefig(
                tmp,
                format=fmt,
                dpi=150,
                bbox_inches="tight",
                metadata={"CreationDate": None} if fmt == "pdf" else {"Software": None},
            )
    plt.close(fig)
