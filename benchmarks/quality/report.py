"""Aggregation and the Markdown report of ``benchmarks/eval_quality.py`` (pure functions over the records)."""

from __future__ import annotations

import datetime as _dt
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: python benchmarks/quality/report.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.quality import metrics as M  # noqa: E402
from benchmarks.quality.readability import READABILITY_NOTE, readability_table  # noqa: E402

HEADLINE = "folio-auto"


MEAN_FIELDS = [
    "recall@5",
    "recall@10",
    "coverage",
    "all_covered",
    "answer_exact",
    "answer_exact_rare",
    "key_recall",
    "iou",
    "iog",
]


def aggregate(recs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"n": len(recs)}
    for f in MEAN_FIELDS:
        vals = [
            r[f] for r in recs if r.get(f) is not None and not (isinstance(r[f], float) and math.isnan(r[f]))
        ]
        out[f] = M.mean(vals)
        out[f + "_n"] = len(vals)
    for f in REF_FIELDS:
        vals = [r[f] for r in recs if r.get(f) is not None]
        out[f] = M.mean(vals)
        out[f + "_n"] = len(vals)
    toks = [r["tokens"] for r in recs]
    out["tokens_mean"] = M.mean(toks)
    out["tokens_p50"] = M.percentile(toks, 50)
    out["tokens_p99"] = M.percentile(toks, 99)
    out["over"] = int(sum(r["over"] for r in recs))
    lats = [r["latency_s"] * 1000 for r in recs]
    out["latency_ms_p50"] = M.percentile(lats, 50)
    out["latency_ms_p99"] = M.percentile(lats, 99)
    nat = [r["natural_over"] for r in recs if "natural_over" in r]
    if nat:
        out["natural_over"] = int(sum(nat))
        out["natural_tokens_p50"] = M.percentile([r["natural_tokens"] for r in recs], 50)
        out["natural_tokens_p99"] = M.percentile([r["natural_tokens"] for r in recs], 99)
    um = [
        (r["unmerged_window_tokens"], r["body_tokens"])
        for r in recs
        if r.get("unmerged_window_tokens") is not None
    ]
    if um:
        out["window_tokens_unmerged"] = int(sum(a for a, _ in um))
        out["window_tokens_merged"] = int(sum(b for _, b in um))
    out["own_doc_share"] = own_doc_share(recs)
    return out


def own_doc_share(recs: Sequence[dict[str, Any]]) -> float | None:
    """Unscoped runs (``eval_quality.py --unscoped``): the share of all packed item tokens that come from each
    question's own document, pooled over the questions (a refusal adds nothing); None for scoped records."""
    mine = [r for r in recs if r.get("unscoped")]
    own = sum(int(r.get("body_tokens") or 0) for r in mine)
    total = own + sum(int(r.get("other_doc_tokens") or 0) for r in mine)
    return own / total if total else None


REF_FIELDS = ["coverage_ref", "full_cov_ref", "answer_ref", "answer_ref_specific", "answer_gold", "pages_touched"]


SLICES = {
    "evidence_kind": ["text", "table", "chart", "figure", "layout", "multi"],
    "lang": ["en", "de", "ja", "zh"],
    "in_text_layer": ["True", "False", "None"],
}


def summarize(
    recs: Sequence[dict[str, Any]], systems: Sequence[str], budgets: Sequence[int]
) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    for s in systems:
        for b in budgets:
            rs = [r for r in recs if r["system"] == s and r["budget"] == b]
            if not rs:
                continue
            entry = {"all": aggregate(rs)}
            for field, values in SLICES.items():
                for v in values:
                    sub = [r for r in rs if r[field] == v]
                    if sub:
                        entry[f"{field}={v}"] = aggregate(sub)
            summary[f"{s}@{b}"] = entry
    return summary


def _f(x: Any, pct: bool = True) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{100 * x:.0f}" if pct else f"{x:.0f}"


HEADERS = [
    "system",
    "R@5",
    "R@10",
    "Cov",
    "All",
    "Ans",
    "Ans≤3",
    "Keys",
    "IoU",
    "IoG",
    "tok p50",
    "tok p99",
    "Over",
    "Nat>B",
    "lat p50 ms",
    "lat p99 ms",
]


def _row(a: dict[str, Any]) -> list[str]:
    return [
        _f(a["recall@5"]), _f(a["recall@10"]), _f(a["coverage"]), _f(a["all_covered"]),
        f"{_f(a['answer_exact'])} ({a['answer_exact_n']})",
        f"{_f(a['answer_exact_rare'])} ({a['answer_exact_rare_n']})",
        f"{_f(a['key_recall'])} ({a['key_recall_n']})",
        _f(a["iou"]), _f(a["iog"]), _f(a["tokens_p50"], False), _f(a["tokens_p99"], False),
        str(a["over"]), str(a.get("natural_over", "–")),
        _f(a["latency_ms_p50"], False), _f(a["latency_ms_p99"], False),
    ]  # fmt: skip


@dataclass(frozen=True)
class SetReport:
    """What one question set's Markdown report is made of: ``summary`` (of :func:`summarize`) and the records it
    came from, the systems in the tables (``peers``: those of them that are peers), the budgets, the command line,
    how many questions, the set's name and folio's hits before assembly."""

    summary: dict[str, Any]
    recs: Sequence[dict[str, Any]]
    systems: Sequence[str]
    peers: Sequence[str]
    budgets: Sequence[int]
    command: str
    nq: int
    set_name: str = "dev"
    folio_k: int = 50


def render_markdown(report: SetReport) -> str:
    """One set's report: per budget the metrics and goal check, slices, window savings, budget use, per question."""
    lines = _intro(report)
    for b in report.budgets:
        lines += _budget_table(report, b)
    lines += _slices(report)
    lines += _window_savings(report)
    lines += _budget_breakdown(report)
    lines += _per_question(report)
    return "\n".join(lines)


def _intro(report: SetReport) -> list[str]:
    return [
        f"# folio quality evaluation: {report.set_name} set",
        "",
        f"Run {_dt.datetime.now(_dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}, {report.nq} questions, "
        "peers pack ranked units (top 64) to the budget, "
        f"k={report.folio_k} hits for folio before assembly.",
        "",
        *("```", report.command, "```", ""),
        "Metrics (means over questions, in %): R@5/R@10 gold-page recall of retrieval before assembly; "
        "Cov gold-page coverage of the packed context; All share of questions with all gold pages packed; "
        "Ans exact normalised answer in the packed text (text-layer answers; n in brackets); Ans≤3 the same "
        "where the answer occurs on ≤3 pages; Keys share of the answer key terms (those on 1–3 doc pages) "
        "found in the packed text; IoU / IoG best box overlap with gold (folio only). Tokens: folio "
        "`budget.used` (full rendered prompt incl. system text, citation contract, wrappers); peers question "
        "+ context after token truncation (no system text). Over: prompts above budget (count). Nat>B: "
        "peers' uncut k=8 output above budget (count).",
        "",
    ]


def _budget_table(report: SetReport, b: int) -> list[str]:
    """The metrics of every system at budget ``b``, then the goal check against the best peer."""
    summary = report.summary
    lines = [f"## Budget {b}", "", "| " + " | ".join(HEADERS) + " |", "|---|" + "---:|" * (len(HEADERS) - 1)]
    for s in report.systems:
        e = summary.get(f"{s}@{b}")
        if e:
            lines.append("| " + " | ".join([s, *_row(e["all"])]) + " |")
    lines.append("")
    head = summary.get(f"{HEADLINE}@{b}", {}).get("all")
    peer_aggs = [(p, summary[f"{p}@{b}"]["all"]) for p in report.peers if f"{p}@{b}" in summary]
    if head and peer_aggs:
        lines += [_goal_check(b, head, peer_aggs), ""]
    return lines


def _goal_check(b: int, head: dict[str, Any], peer_aggs: Sequence[tuple[str, dict[str, Any]]]) -> str:
    best_cov = max(peer_aggs, key=lambda pa: pa[1]["coverage"])
    best_key = max(peer_aggs, key=lambda pa: pa[1]["key_recall"] if not math.isnan(pa[1]["key_recall"]) else -1)
    best_ex = max(peer_aggs, key=lambda pa: pa[1]["answer_exact"] if not math.isnan(pa[1]["answer_exact"]) else -1)
    d_cov = 100 * (head["coverage"] - best_cov[1]["coverage"])
    cov_goal = min(best_cov[1]["coverage"] + 0.10, 0.98)
    ok = {
        "cov": head["coverage"] >= cov_goal - 1e-9,
        "key": head["key_recall"] >= best_key[1]["key_recall"],
        "ex": head["answer_exact"] >= best_ex[1]["answer_exact"],
        "over": head["over"] == 0,
    }
    met = {k: "met" if v else "NOT met" for k, v in ok.items()}
    return (
        f"Goal check at {b}: {HEADLINE} coverage {_f(head['coverage'])} vs best peer {best_cov[0]} "
        f"{_f(best_cov[1]['coverage'])} (Δ {d_cov:+.0f} pts, goal ≥ {_f(cov_goal)}: {met['cov']}); "
        f"key recall {_f(head['key_recall'])} vs {best_key[0]} {_f(best_key[1]['key_recall'])} "
        f"({met['key']}); exact answer {_f(head['answer_exact'])} vs {best_ex[0]} "
        f"{_f(best_ex[1]['answer_exact'])} ({met['ex']}); over budget {head['over']} ({met['over']})."
    )


def _slices(report: SetReport) -> list[str]:
    """Coverage / answer / key recall per evidence source and language, per budget."""
    lines = ["## Per evidence source and language (coverage / answer / key recall, %)", ""]
    cols = [f"{f}={v}" for f, vs in SLICES.items() for v in vs]
    for b in report.budgets:
        lines += [f"### Budget {b}", ""]
        ref = report.systems[0] if report.systems else HEADLINE
        mine = [r for r in report.recs if r["system"] == ref and r["budget"] == b]
        ns = {c: sum(1 for r in mine if f"{_field(r, c)}" == c.split("=")[1]) for c in cols}
        lines.append("| system | " + " | ".join(f"{c.split('=')[1]} (n={ns[c]})" for c in cols) + " |")
        lines.append("|---|" + "---:|" * len(cols))
        for s in report.systems:
            e = report.summary.get(f"{s}@{b}")
            if not e:
                continue
            cells = []
            for c in cols:
                a = e.get(c)
                cells.append("–" if not a else f"{_f(a['coverage'])} / {_f(a['answer_exact'])} / {_f(a['key_recall'])}")
            lines.append(f"| {s} | " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def _window_savings(report: SetReport) -> list[str]:
    """Tokens saved by merging overlapping windows (window variants only; none run: no section)."""
    wins = [s for s in report.systems if s.startswith("folio-window")]
    if not wins:
        return []
    lines = [
        "## Tokens saved by merging overlapping windows",
        "",
        "Body tokens of window items as packed vs the sum of each trigger's own window "
        "(merged items only re-counted).",
        "",
        "| variant | budget | unmerged | merged | saved |",
        "|---|---:|---:|---:|---:|",
    ]
    for s in wins:
        for b in report.budgets:
            a = report.summary.get(f"{s}@{b}", {}).get("all", {})
            if "window_tokens_unmerged" in a and a["window_tokens_unmerged"]:
                u, m = a["window_tokens_unmerged"], a["window_tokens_merged"]
                lines.append(f"| {s} | {b} | {u} | {m} | {100 * (u - m) / u:.1f}% |")
    lines.append("")
    return lines


def _budget_breakdown(report: SetReport) -> list[str]:
    """The token breakdown of the headline system's packages (no package with one: no section)."""
    parts = ["system", "question", "wrappers", "text", "images", "overhead"]
    rows = []
    for b in report.budgets:
        rs = [r for r in report.recs if r["system"] == HEADLINE and r["budget"] == b and r.get("breakdown")]
        if rs:
            means = [sum(float(r["breakdown"].get(k) or 0) for r in rs) / len(rs) for k in parts]
            rows.append(f"| {b} | " + " | ".join(f"{m:.0f}" for m in means) + f" | {100 * means[3] / b:.0f}% |")
    if not rows:
        return []
    return [
        f"## Where the budget goes ({HEADLINE}, mean tokens per package)",
        "",
        "| budget | " + " | ".join(parts) + " | evidence text share |",
        "|---:|" + "---:|" * (len(parts) + 1),
        *rows,
        "",
    ]


def _per_question(report: SetReport) -> list[str]:
    """The headline system's retrieval, coverage and answer per question and budget."""
    budgets = report.budgets
    lines = [
        f"## Per question ({HEADLINE})",
        "",
        "R@10 before assembly vs coverage after: a gold page in R@10 but not packed is a packing drop; "
        "missing from the hits is a retrieval miss; (cut): the answer's gold page was packed, the answer was not.",
        "",
        "| id | kind | lang | gold | " + " | ".join(f"R@10 / Cov / Ans @{b}" for b in budgets) + " |",
        "|---|---|---|---|" + "---|" * len(budgets),
    ]
    by = {(r["id"], r["budget"]): r for r in report.recs if r["system"] == HEADLINE}
    for qid in sorted({r["id"] for r in report.recs}):
        cells, first = [], None
        for b in budgets:
            r = by.get((qid, b))
            if r is None:
                cells.append("–")
                continue
            first = first or r
            cut = " (cut)" if r.get("answer_cut") else ""  # a specific answer on a packed gold page, not sent
            cells.append(f"{_f(r['recall@10'])} / {_f(r['coverage'])} / {_f(r['answer_exact'])}{cut}")
        if first:
            row = f"| {qid} | {first['evidence_kind']} | {first['lang']} | {first['gold']} | "
            lines.append(row + " | ".join(cells) + " |")
    lines.append("")
    return lines


def _field(r: dict[str, Any], col: str) -> Any:
    return r[col.split("=")[0]]


# --------------------------------------------------------------------------------------------------
# The headline: REFERENCE.md's metrics per set, half and budget
# --------------------------------------------------------------------------------------------------

HEAD_COLS = [
    "system", "B", "coverage %", "full cov %", "answer recall %", "ans. specific %", "ans. on gold page %",
    "tokens mean", "p50",
    "over B", "pages touched", "monotonicity violations",
]  # fmt: skip
UNSCOPED_COLS = ["own-document tokens %", "refused"]


def _p(x: Any) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}"


def _n(x: Any) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.0f}"


def violations(recs: Sequence[dict[str, Any]]) -> dict[str, list[str]]:
    """Per system, the questions whose covered gold pages shrink as the budget grows."""
    covered = {(r["system"], r["id"], r["budget"]): r.get("covered_gold") or [] for r in recs if r.get("gold_valid")}
    return M.monotonicity_violations(covered)


def headline_table(recs: Sequence[dict[str, Any]], systems: Sequence[str], budgets: Sequence[int]) -> list[str]:
    """The REFERENCE.md metrics per system and budget; unscoped runs add the own document's token share and the
    refusals (an on-topic question refused as off-topic over the mixed store)."""
    viol = violations(recs)
    unscoped = any(r.get("unscoped") for r in recs)
    cols = HEAD_COLS + UNSCOPED_COLS if unscoped else HEAD_COLS
    lines = ["| " + " | ".join(cols) + " |", "|---|" + "---:|" * (len(cols) - 1)]
    for s in systems:
        for b in budgets:
            rs = [r for r in recs if r["system"] == s and r["budget"] == b]
            if not rs:
                continue
            a = aggregate(rs)
            lines.append(
                f"| {s} | {b} | {_p(a['coverage_ref'])} | {_p(a['full_cov_ref'])} | "
                f"{_p(a['answer_ref'])} (n={a['answer_ref_n']}) | {_p(a['answer_ref_specific'])} "
                f"(n={a['answer_ref_specific_n']}) | {_p(a['answer_gold'])} | {_n(a['tokens_mean'])} | "
                f"{_n(a['tokens_p50'])} | "
                f"{a['over']} | {a['pages_touched']:.1f} | {len(viol.get(s, []))} |"
                + (f" {_p(a['own_doc_share'])} | {sum(1 for r in rs if r.get('refused'))} |" if unscoped else "")
            )
    return lines


def kind_table(recs: Sequence[dict[str, Any]], systems: Sequence[str], budgets: Sequence[int]) -> list[str]:
    """Coverage / specific answers per document kind (``doc_type``), each system and budget: the two measures
    the issues judge by (answer recall counts a "6" met by chance on any page)."""
    kinds = sorted({r["doc_type"] for r in recs})
    nq = {k: len({r["id"] for r in recs if r["doc_type"] == k}) for k in kinds}
    lines = [
        "| system | B | " + " | ".join(f"{k} (n={nq[k]})" for k in kinds) + " |",
        "|---|---:|" + "---:|" * len(kinds),
    ]
    for s in systems:
        for b in budgets:
            cells = []
            for k in kinds:
                rs = [r for r in recs if r["system"] == s and r["budget"] == b and r["doc_type"] == k]
                a = aggregate(rs) if rs else None
                cells.append("–" if not a else f"{_p(a['coverage_ref'])} / {_p(a['answer_ref_specific'])}")
            lines.append(f"| {s} | {b} | " + " | ".join(cells) + " |")
    return lines


REF_NAMES = {
    "BM25 pages": "bm25-pages",
    "dense 250w": "raw-chunks",
    "sentence-window": "li-sentence-window",
    "auto-merging": "li-auto-merging",
    "parent-document": "lc-parent-document",
}
REF_COMPARE = [
    ("coverage %", "coverage_ref", True),
    ("full cov %", "full_cov_ref", True),
    ("answer recall %", "answer_ref", True),
    ("ans. specific %", "answer_ref_specific", True),
    ("tokens mean", "tokens_mean", False),
    ("p50", "tokens_p50", False),
    ("pages touched", "pages_touched", False),
]


def parse_reference(path: Path) -> dict[tuple[str, int], dict[str, float]]:
    """REFERENCE.md's peer table: ``(peer name, budget) -> {column: value}``."""
    out: dict[tuple[str, int], dict[str, float]] = {}
    header: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] == "system":
            header = cells
            continue
        name = next((v for k, v in REF_NAMES.items() if header and k in cells[0]), None)
        if name and len(cells) == len(header):
            try:
                out[(name, int(cells[1]))] = {h: float(c) for h, c in zip(header[2:], cells[2:], strict=True)}
            except ValueError:
                continue
    return out


def reference_table(recs: Sequence[dict[str, Any]], ref_path: Path, budgets: Sequence[int]) -> list[str]:
    """This harness's peer figures beside REFERENCE.md's (ours / theirs, and the largest gap in points)."""
    ref = parse_reference(ref_path)
    lines = [
        "| peer | B | " + " | ".join(f"{c} (ours / ref)" for c, _, _ in REF_COMPARE) + " | max Δ pts |",
        "|---|---:|" + "---:|" * (len(REF_COMPARE) + 1),
    ]
    for name in REF_NAMES.values():
        for b in budgets:
            rs = [r for r in recs if r["system"] == name and r["budget"] == b]
            theirs = ref.get((name, b))
            if not rs or not theirs:
                continue
            a = aggregate(rs)
            cells, gap = [], 0.0
            for col, field, pct in REF_COMPARE:
                ours = 100 * a[field] if pct else a[field]
                if pct:
                    gap = max(gap, abs(ours - theirs[col]))
                cells.append(f"{ours:.1f} / {theirs[col]:g}")
            lines.append(f"| {name} | {b} | " + " | ".join(cells) + f" | {gap:.1f} |")
    return lines


def answer_reach(recs: Sequence[dict[str, Any]]) -> str:
    """One sentence: how many answerable questions have their answer in the gold pages' text layer at all
    (``answer_on_gold``, a property of the question), the most "ans. on gold page" can reach; answer recall
    above it is matched off the evidence pages."""
    by_q = {r["id"]: r["answer_on_gold"] for r in recs if r.get("answer_on_gold") is not None}
    if not by_q:
        return ""
    k = sum(1 for v in by_q.values() if v)
    return (f"Answers in the gold pages' text layer: {k} of the {len(by_q)} answerable questions "
            f"({100 * k / len(by_q):.1f}%), the most \"ans. on gold page\" can reach; answer recall above it "
            "comes from the answer string found on other pages.")


def render_headline(
    groups: Sequence[tuple[str, Sequence[dict[str, Any]]]],
    systems: Sequence[str],
    budgets: Sequence[int],
    reference: Path | None = None,
) -> str:
    """The headline report of one set: per group (half A, half B, whole) the REFERENCE.md metrics, the
    monotonicity count, a per-document-kind table, and the peers beside REFERENCE.md where it exists."""
    lines: list[str] = []
    for name, recs in groups:
        nq = len({r["id"] for r in recs})
        nv = len({r["id"] for r in recs if r.get("gold_valid")})
        lines += [f"## {name} ({nq} questions, {nv} with valid gold pages)", ""]
        lines += [*headline_table(recs, systems, budgets), ""]
        reach = answer_reach(recs)
        if reach:
            lines += [reach, ""]
        lines += [f"### {name}: Readability", "", *readability_table(recs, systems, budgets), ""]
    whole_name, whole = groups[-1]
    lines += [f"### {whole_name} by document kind (coverage % / specific answers %)", ""]
    lines += [*kind_table(whole, systems, budgets), ""]
    if reference is not None and reference.exists() and whole:
        lines += [f"### {whole_name}: peers beside {reference.name}", ""]
        lines += [*reference_table(whole, reference, budgets), ""]
    lines += [
        "Definitions as in ../shared/eval/mmlb/REFERENCE.md. Coverage: share of the valid gold pages (questions "
        "whose gold pages lie inside the document) with some of their text packed: an item sent as an image "
        "only (no text) does not count, as REFERENCE.md counts folio. Answer recall: every item of the "
        "normalised answer occurs as whole words in the packed context, over answerable questions whose answer "
        "occurs in the document's text layer; specific: those whose answer is on at most 3 pages. Tokens: folio "
        "`budget.used` (the whole prompt); peers the exact string sent (question, blank line, units joined by blank "
        "lines, the last unit cut at the budget). Monotonicity violations: questions whose covered gold pages at a "
        "larger budget are not a superset of those at a smaller one.",
        "",
        READABILITY_NOTE,
        "",
    ]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------
# Misses: python benchmarks/quality/report.py --misses SET SYSTEM BUDGET
# --------------------------------------------------------------------------------------------------


def load_records(path: Path) -> dict[str, Any]:
    import gzip
    import json

    payload: dict[str, Any] = json.loads(gzip.decompress(path.read_bytes()))
    return payload


def select_records(payload: dict[str, Any], group: str, system: str, budget: int) -> list[dict[str, Any]]:
    """The records of ``system`` at ``budget`` in a set (``mmlb``) or a half (``mmlb-A``)."""
    base, _, half = group.partition("-")
    recs = (payload["sets"].get(group) or payload["sets"].get(base) or {}).get("records", [])
    if group not in payload["sets"] and half:
        recs = [r for r in recs if r.get("half") == half]
    return [r for r in recs if r["system"] == system and r["budget"] == budget]


def answers_of(payload: dict[str, Any], group: str) -> dict[str, str]:
    """The answers of a set's questions by id, read from the question file the run names (records do not carry
    them: they are committed, the question sets are not); empty when that file is not on this machine."""
    from benchmarks.quality.questions import load_questions

    path = Path((payload["sets"].get(group) or payload["sets"].get(group.partition("-")[0]) or {}).get(
        "questions", ""))
    if not path.name or not path.is_file():
        return {}
    return {q["id"]: str(q.get("answer", "")) for q in load_questions(str(path), None)}


def misses_lines(recs: Sequence[dict[str, Any]], show_all: bool = False,
                 answers: Mapping[str, str] | None = None) -> list[str]:
    """One line per question: id, gold pages, packed pages (and those sent as images only, which do not count
    as covered), covered gold pages, answer (from ``answers``) and whether it was found.
    Only misses (a valid gold page not covered, or an eligible answer not found) unless ``show_all``."""
    lines = ["id\tkind\tgold\tpacked\timage-only\tcovered\tfound\tspecific\ttokens\tanswer"]
    for r in sorted(recs, key=lambda r: r["id"]):
        cov_miss = r.get("gold_valid") and (r.get("coverage_ref") or 0.0) < 1.0
        ans_miss = r.get("answer_ref") == 0.0
        if not (show_all or cov_miss or ans_miss):
            continue
        found = {None: "-", 1.0: "yes", 0.0: "NO"}[r.get("answer_ref")]
        spec = "yes" if r.get("answer_ref_specific") is not None else "-"
        packed = ",".join(str(p) for p in r.get("packed_pages") or [])
        covered = ",".join(str(p) for p in r.get("covered_gold") or [])
        images = ",".join(str(p) for p in r.get("textless_pages") or []) or "-"
        lines.append(
            f"{r['id']}\t{r.get('doc_type', '')}\t{r.get('gold', '')}\t{packed}\t{images}\t{covered}\t{found}\t{spec}\t"
            f"{r['tokens']}\t{str((answers or {}).get(r['id'], r.get('answer', '')))[:80]}"
        )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    import argparse
    import logging

    ap = argparse.ArgumentParser(description="Per-question misses of one system at one budget.")
    ap.add_argument("--misses", nargs=3, metavar=("SET", "SYSTEM", "BUDGET"), required=True,
                    help="e.g. mmlb-A folio-auto 4000 (a set, or a half of a halved set)")
    ap.add_argument("--all", action="store_true", help="every question, not only the misses")
    ap.add_argument("--file", default=str(Path(__file__).resolve().parents[1] / "results" / "quality.json.gz"))
    args = ap.parse_args(argv)
    group, system, budget = args.misses[0], args.misses[1], int(args.misses[2])
    payload = load_records(Path(args.file))
    recs = select_records(payload, group, system, budget)
    if not recs:
        logging.getLogger("quality_report").error("no records for %s %s %d in %s", group, system, budget, args.file)
        return 1
    sys.stdout.write("\n".join(misses_lines(recs, args.all, answers_of(payload, group))) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
