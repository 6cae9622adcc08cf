"""Tables of the adversarial, calibration and OOD suites from the long summary table.

- adversarial: rows = models; columns = clean top-1, then robust top-1 of every (attack, eps);
- calibration: rows = (model, set); columns = top-1, ECE, NLL, Brier raw and temperature-scaled, T;
- ood: rows = models; columns = AUROC and FPR@95 of every (OOD set, score).
Cells are means over replicates (these suites have none today: one record per condition);
`–` where a value is undefined. A suite without records gives no table and a note.
"""

from __future__ import annotations

import json
import math

import pandas as pd

from vlstress.report import records
from vlstress.report.tables import MISSING, latex_escape

CALIBRATION_COLUMNS = {
    "top1": "Top-1", "ece": "ECE", "ece_ts": "ECE (T)", "nll": "NLL", "nll_ts": "NLL (T)", "brier": "Brier", "brier_ts": "Brier (T)",
    "temperature": "T",
}  # fmt: skip


def _cell(value: float, digits: int = 1) -> str:
    return MISSING if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def _conditions(rows: pd.DataFrame) -> pd.Series:
    return rows["condition_json"].map(json.loads)


def adversarial_table(agg: pd.DataFrame) -> pd.DataFrame | None:
    rows = records.rows(agg, "adversarial")
    if rows.empty:
        return None
    rows = rows.assign(condition_dict=_conditions(rows))
    models = records.models(rows)
    cells: dict[str, dict[str, str]] = {}
    clean = rows[rows["metric"] == "top1_clean"].groupby("label", sort=False)["mean"].first()
    cells["clean top-1"] = {m: _cell(clean.get(m)) for m in models}
    robust = rows[rows["metric"] == "robust_top1"]
    for cond in dict.fromkeys(robust["condition_json"]):
        c = json.loads(cond)
        values = robust[robust["condition_json"] == cond].set_index("label")["mean"]
        cells[f"{c['attack']} ε={c['eps']:g}"] = {m: _cell(values.get(m)) for m in models}
    return pd.DataFrame(cells, index=pd.Index(models, name="model"))


def calibration_table(agg: pd.DataFrame) -> pd.DataFrame | None:
    rows = records.rows(agg, "calibration")
    if rows.empty:
        return None
    out = []
    for (label, cond), group in rows.groupby(["label", "condition_json"], sort=False):
        c = json.loads(cond)
        name = str(c.get("set"))
        if "corruption" in c:
            name += f": {c['corruption']} s{c.get('severity')}"
        elif "attack" in c:
            name += f": {c['attack']}"
        elif c.get("split"):
            name += f" ({c['split']}, ID)"
        values = dict(zip(group["metric"], group["mean"]))
        out.append({"model": label, "set": name, **{title: _cell(values.get(metric), 3 if metric.startswith(("nll", "brier", "temp")) else 1)
                                                    for metric, title in CALIBRATION_COLUMNS.items()}})  # fmt: skip
    return pd.DataFrame(out).set_index(["model", "set"])


def ood_table(agg: pd.DataFrame) -> pd.DataFrame | None:
    rows = records.rows(agg, "ood")
    if rows.empty:
        return None
    models = records.models(rows)
    cells: dict[str, dict[str, str]] = {}
    for cond in dict.fromkeys(rows["condition_json"]):
        c = json.loads(cond)
        for metric, title in (("auroc", "AUROC"), ("fpr95", "FPR@95")):
            values = rows[(rows["condition_json"] == cond) & (rows["metric"] == metric)].set_index("label")["mean"]
            cells[f"{c['ood']} {c['score']} {title}"] = {m: _cell(values.get(m)) for m in models}
    return pd.DataFrame(cells, index=pd.Index(models, name="model"))


TABLES = {
    "adversarial": ("Zero-shot top-1 (%) under adversarial attacks (ε in 1/255 of the attack's norm)", adversarial_table),
    "calibration": ("Calibration of the zero-shot softmax: ECE (%), NLL, Brier, raw and with the temperature T fitted on held-out ID images", calibration_table),
    "ood": ("OOD detection with the zero-shot classifier: AUROC and FPR at 95% TPR (%)", ood_table),
}  # fmt: skip


def holistic_tables(table: pd.DataFrame) -> tuple[dict[str, tuple[str, pd.DataFrame]], list[str]]:
    """(suite -> (caption, frame)) of the suites that have records, notes for the others."""
    agg = records.aggregate(table)
    found, notes = {}, []
    for name, (caption, build) in TABLES.items():
        frame = build(agg)
        if frame is None:
            notes.append(f"no {name} records: the {name} suite is off or has not run")
        else:
            found[name] = (caption, frame)
    return found, notes


def to_markdown(found: dict[str, tuple[str, pd.DataFrame]], notes: list[str]) -> str:
    parts = [f"### {caption}\n\n{frame.reset_index().to_markdown(index=False, disable_numparse=True)}" for caption, frame in found.values()]
    parts += [f"_Note: {note}._" for note in notes]
    return "\n\n".join(parts)


def to_latex(found: dict[str, tuple[str, pd.DataFrame]], label: str = "tab:holistic") -> str:
    parts = []
    for name, (caption, frame) in found.items():
        block = frame.reset_index()
        block.columns = [latex_escape(str(c)).replace("ε", r"$\varepsilon$") for c in block.columns]
        block = block.map(lambda v: latex_escape(str(v)))
        latex = block.style.hide(axis="index").to_latex(
            hrules=True, column_format="l" * len(frame.index.names) + "r" * frame.shape[1], caption=latex_escape(caption).replace("ε", r"$\varepsilon$"),
            label=f"{label}-{name}", position="t", position_float="centering", environment="table*",
        )  # fmt: skip
        latex = latex.replace("\\begin{tabular}", "\\resizebox{\\textwidth}{!}{%\n\\begin{tabular}", 1)
        parts.append(latex.replace("\\end{tabular}\n", "\\end{tabular}%\n}\n", 1))
    return "\n".join(parts) if parts else "% no adversarial, calibration or OOD records\n"
