"""Chapter 31 figures: the pre-norm decoder block on the worked example.

Each figure function takes ``llm_from_scratch.chapters.ch31.learner_evidence()``
and returns a ``matplotlib.figure.Figure``; its sibling ``*_alt`` returns the
Russian alt text. Roles are told apart without colour: a solid frame is the
unchanged identity path (the residual stream), a dashed frame a transformation
branch, a double frame a residual addition.

    from llm_from_scratch.chapters.ch31 import learner_evidence
    from llm_from_scratch.plots import ch31 as plots
    evidence = learner_evidence()
    fig = plots.residual_flow(evidence, token=1)    # display(fig) in a notebook
    plots.residual_flow_alt(evidence, token=1)
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from ..chapters.ch31 import LearnerEvidence
from ..chapters.formatting import format_number, format_shape, format_vector
from . import common
from .common import (
    BAR_HATCH,
    INK,
    PAPER,
    SHADE,
    SIZE_SMALL,
    SIZE_TEXT,
    SIZE_TITLE,
    Box,
    FlowStage,
    PlotError,
    Sheet,
    causal_tables_figure,
    check_token,
    flow_rows,
    line_height,
    pinned_style,
    prefix_alt,
    prefix_table,
    prefix_verdicts,
    status_grid,
    text_size,
    vertical_vector,
)

__all__ = [
    "block_stage_flow",
    "block_stage_flow_alt",
    "causal_probabilities",
    "causal_probabilities_alt",
    "pre_post_contrast",
    "pre_post_contrast_alt",
    "proofs_panel",
    "proofs_panel_alt",
    "residual_flow",
    "residual_flow_alt",
    "stage_tables",
    "stage_tables_alt",
]

WIDTH = 1000

# Stage key -> (symbol, Russian name, role). Roles pick the frame: the stream entering the block
# (solid), a transformation branch (dashed), a residual addition's result (double), a readout (dotted).
_STAGES = {
    "input": ("x", "входной остаточный поток", "solid"),
    "attention_norm": ("N_a", "RMSNorm перед вниманием", "dashed"),
    "attention_weights": ("веса", "веса каузального внимания", "dashed"),
    "attention_branch": ("A", "выход ветви внимания", "dashed"),
    "after_attention": ("x'", "после сложения с вниманием", "double"),
    "feed_forward_norm": ("N_f", "RMSNorm перед сетью", "dashed"),
    "feed_forward_branch": ("F", "выход ветви SwiGLU", "dashed"),
    "output": ("y", "выход блока", "double"),
    "probe_logits": ("логиты", "проверочные логиты y·P", "dotted"),
}
_FORMULAS = {
    "input": "вход x", "attention_norm": "N_a = RMSNorm_a(x)", "attention_weights": "веса внимания",
    "attention_branch": "A = MHA(N_a)", "after_attention": "x' = x + A", "feed_forward_norm": "N_f = RMSNorm_f(x')",
    "feed_forward_branch": "F = SwiGLU(N_f)", "output": "y = x' + F", "probe_logits": "логиты = y·P",
}
_NOTES = {   # the third line of a stage-flow box
    "input": "остаточный поток", "attention_norm": "перед вниманием", "attention_weights": "внутри MHA",
    "attention_branch": "ветвь внимания", "after_attention": "1-е сложение", "feed_forward_norm": "перед SwiGLU",
    "feed_forward_branch": "ветвь SwiGLU", "output": "2-е сложение", "probe_logits": "проверка вне блока",
}
_ROLE_KEY = [("frame-solid", "тождественный путь (остаточный поток)"), ("frame-dashed", "ветвь преобразования"),
             ("frame-double", "остаточное сложение")]
_BOX_NAMES = {   # residual-flow box titles, two lines each
    "input": "входной остаточный\nпоток", "attention_norm": "RMSNorm\nперед вниманием",
    "attention_branch": "выход ветви\nвнимания", "after_attention": "после сложения\nс вниманием",
    "feed_forward_norm": "RMSNorm\nперед сетью", "feed_forward_branch": "выход ветви\nSwiGLU",
    "output": "выход блока\n",
}
_HEADERS = {   # stage-table column titles
    "input": "вход x\n", "attention_norm": "N_a =\nRMSNorm_a(x)", "attention_branch": "A =\nMHA(N_a)",
    "after_attention": "x' =\nx + A", "feed_forward_norm": "N_f =\nRMSNorm_f(x')",
    "feed_forward_branch": "F =\nSwiGLU(N_f)", "output": "y =\nx' + F", "probe_logits": "логиты = y·P",
}
_HALVES = (("input", "attention_norm", "attention_branch", "after_attention"),
           ("feed_forward_norm", "feed_forward_branch", "output"))


def _stage(key: str) -> tuple[str, str, str]:
    if key not in _STAGES:
        raise PlotError(f"block figure has no label for stage {key!r}; known stages {list(_STAGES)}",
                        stage="block figures")
    return _STAGES[key]


def _tokens(evidence: LearnerEvidence) -> int:
    return evidence.primary.input.shape[1]


def _row(evidence: LearnerEvidence, stage: str, token: int) -> np.ndarray:
    p = evidence.primary
    values = p.probe_logits if stage == "probe_logits" else p.value(stage)
    return values[0, token]


# -- a. stage flow ------------------------------------------------------------------------

def _flow_stages(evidence: LearnerEvidence) -> list[FlowStage]:
    return [FlowStage(key, _FORMULAS.get(key, _stage(key)[0]), format_shape(shape), _stage(key)[2],
                      _NOTES.get(key, "")) for key, shape in evidence.shapes.items()]


@pinned_style
def block_stage_flow(evidence: LearnerEvidence) -> Figure:
    """Every stage of the block with its shape from ``evidence.shapes``, in computation order."""
    stages = _flow_stages(evidence)
    first = len(stages) - len(stages) // 2
    sheet = Sheet(WIDTH, 330)
    sheet.text(20, 20, "Блок сохраняет форму: x' = x + MHA(RMSNorm_a(x)),  y = x' + SwiGLU(RMSNorm_f(x'))",
               gid="flow-title", size=SIZE_TEXT, bold=True)
    flow_rows(sheet, stages, per_row=(first, len(stages) - first), top=44, box_width=178, box_height=76,
              row_gap=44)
    sheet.key(20, 268, [*_ROLE_KEY, ("frame-dotted", "проверка вне блока"), ("arrow", "следующий этап")], width=960)
    return sheet.figure


def block_stage_flow_alt(evidence: LearnerEvidence) -> str:
    parts = ", ".join(f"{stage.name} ({_stage(stage.key)[1]}) {stage.shape}" for stage in _flow_stages(evidence))
    return ("Схема этапов блока декодера в порядке вычислений, стрелками слева направо в две строки: " + parts
            + ". Поток на входе обведён сплошной рамкой, ветви преобразования — штриховой, результаты "
            "остаточных сложений — двойной, проверочные логиты вне блока — пунктирной. Все тензоры потока "
            "имеют одну форму.")


# -- b. residual flow for one token -------------------------------------------------------------

_RESIDUAL_HALVES = (   # stream in, branch norm, branch output, stream out, branch name
    ("input", "attention_norm", "attention_branch", "after_attention", "RMSNorm_a → MHA"),
    ("after_attention", "feed_forward_norm", "feed_forward_branch", "output", "RMSNorm_f → SwiGLU"),
)


@pinned_style
def residual_flow(evidence: LearnerEvidence, token: int = 1) -> Figure:
    """Both residual paths for one token: identity paths, the two branches, the two additions."""
    token = check_token(token, _tokens(evidence), "residual flow")
    sheet = Sheet(WIDTH, 600)
    sheet.text(20, 18, f"Токен {token}: x' = x + MHA(RMSNorm_a(x)),  y = x' + SwiGLU(RMSNorm_f(x'))",
               gid="residual-title", size=SIZE_TEXT, bold=True)
    top, previous = 40.0, None
    for half, stages in enumerate(_RESIDUAL_HALVES):
        stream, out = _residual_half(sheet, evidence, token, half, stages, top)
        if previous is not None:      # the stream leaving the first half enters the second one
            middle = previous.bottom + 28
            sheet.arrow([(previous.cx, previous.bottom + 2), (previous.cx, middle), (stream.cx - 35, middle),
                         (stream.cx - 35, stream.y - 2)], "solid", gid="stream-carry", linewidth=1.3)
        previous, top = out, out.bottom + 50
    used = sheet.key(20, top - 8, [*_ROLE_KEY, ("arrow", "направление потока")], width=960)
    sheet.crop(top - 8 + used + 6)
    return sheet.figure


def _residual_half(sheet: Sheet, evidence: LearnerEvidence, token: int, half: int,
                   stages: tuple[str, str, str, str, str], top: float) -> tuple[Box, Box]:
    """One residual path: stream box, two dashed branch boxes, the double-framed addition, result box."""
    source, norm, branch, result, branch_name = stages
    ident_y, top = top + 6, top + 30
    step = line_height(SIZE_SMALL)
    box_h = 6 * step + 22
    stream, norm_box = Box(20, top, 180, box_h), Box(250, top, 180, box_h)
    branch_box, out = Box(475, top, 180, box_h), Box(790, top, 190, box_h)
    add = Box(700, top + box_h / 2 - 22, 44, 44)
    for box, key, style, role in ((stream, source, "solid", "stream"), (norm_box, norm, "dashed", "norm"),
                                  (branch_box, branch, "dashed", "branch"), (out, result, "solid", "result")):
        gid = f"value-{half}-{role}"
        sheet.frame(box, style, gid=gid, linewidth=1.5)
        sheet.text(box.cx, box.y + 7 + step, _BOX_NAMES[key], gid=f"{gid}-name", size=SIZE_SMALL, ha="center",
                   bold=True)
        sheet.text(box.cx, box.y + 16 + 4 * step, vertical_vector(_stage(key)[0], _row(evidence, key, token)),
                   gid=f"{gid}-text", size=SIZE_SMALL, ha="center", ma="right")
    sheet.frame(add, "double", gid=f"residual-add-{half}")
    sheet.text(add.cx, add.cy, "+", gid=f"residual-add-{half}-text", size=SIZE_TITLE + 4, ha="center", bold=True)
    for i, (a, b) in enumerate(((stream, norm_box), (norm_box, branch_box), (branch_box, add))):
        sheet.arrow([(a.right + 2, a.cy), (b.x - 2, b.cy)], "dashed", gid=f"branch-arrow-{half}-{i}")
    sheet.arrow([(add.right + 2, add.cy), (out.x - 2, out.cy)], "solid", gid=f"sum-arrow-{half}")
    exit_x = stream.cx + 35
    sheet.arrow([(exit_x, stream.y - 1), (exit_x, ident_y), (add.cx, ident_y), (add.cx, add.y - 2)], "solid",
                gid=f"identity-path-{half}", linewidth=1.8)
    sheet.text((exit_x + add.cx) / 2, ident_y, f"тождественный путь: {_stage(source)[0]} без изменений",
               gid=f"identity-label-{half}", size=SIZE_SMALL, ha="center", backdrop=True)
    sheet.text((norm_box.x + branch_box.right) / 2, top + box_h + 12, f"ветвь преобразования: {branch_name}",
               gid=f"branch-label-{half}", size=SIZE_SMALL, ha="center", italic=True)
    return stream, out


def residual_flow_alt(evidence: LearnerEvidence, token: int = 1) -> str:
    token = check_token(token, _tokens(evidence), "residual flow")
    values = {key: format_vector(_row(evidence, key, token)) for key in (*_HALVES[0], *_HALVES[1])}
    return (f"Схема двух остаточных путей блока для токена {token}. Первая половина: вход x = {values['input']} "
            f"идёт по тождественному пути (сплошная рамка) к остаточному сложению (двойная рамка) и в ветвь "
            f"преобразования (штриховые рамки): N_a = RMSNorm_a(x) = {values['attention_norm']}, "
            f"A = MHA(N_a) = {values['attention_branch']}; сложение даёт x' = x + A = {values['after_attention']}. "
            f"Вторая половина: x' по тождественному пути и через ветвь N_f = RMSNorm_f(x') = "
            f"{values['feed_forward_norm']}, F = SwiGLU(N_f) = {values['feed_forward_branch']}; "
            f"сложение даёт y = x' + F = {values['output']}.")


# -- c. stage tables ---------------------------------------------------------------------------

@pinned_style
def stage_tables(evidence: LearnerEvidence) -> Figure:
    """Every stage value of both halves for every token (rows), then the probe logits."""
    tokens = _tokens(evidence)
    sheet = Sheet(WIDTH, 700)
    sections = (("Первая половина: x' = x + MHA(RMSNorm_a(x))", _HALVES[0]),
                ("Вторая половина: y = x' + SwiGLU(RMSNorm_f(x'))", _HALVES[1]))
    x, bottom = 20.0, 0.0
    for s, (title, keys) in enumerate(sections):
        sheet.text(x, 18, title, gid=f"section-{s}-title", size=SIZE_TEXT, bold=True)
        rows = [[f"t={t}", *(vertical_vector("", _row(evidence, key, t))[1:] for key in keys)] for t in range(tokens)]
        layout = _framed_stage_table(sheet, x, 34, keys, rows, gid=f"stages-{s}")
        x, bottom = x + layout.width + 24, max(bottom, layout.y + layout.height)
    top = bottom + 26
    sheet.text(20, top, "Проверка вне блока: логиты = y·P", gid="section-2-title", size=SIZE_TEXT, bold=True)
    rows = [[f"t={t}", format_vector(_row(evidence, "probe_logits", t))] for t in range(tokens)]
    layout = _framed_stage_table(sheet, 20, top + 16, ("probe_logits",), rows, gid="stages-2")
    sheet.text(layout.x + layout.width + 30, layout.y + layout.height / 2,
               "Строки — позиции токенов, столбцы — этапы.\nТождественный путь несёт x и x' без изменений;\n"
               "ветви добавляют A и F; двойная рамка — результат\nостаточного сложения.",
               gid="stages-note", size=SIZE_SMALL)
    y = layout.y + layout.height + 14
    used = sheet.key(20, y, [("frame-solid", "вход блока (тождественный путь)"),
                             ("frame-dashed", "ветвь преобразования"),
                             ("frame-double", "результат остаточного сложения"), ("frame-dotted", "проверка")],
                     width=960)
    sheet.crop(y + used + 6)
    return sheet.figure


def _framed_stage_table(sheet: Sheet, x: float, y: float, keys: tuple[str, ...], rows: list[list[str]], *,
                        gid: str):
    """A table whose stage columns are framed by role (solid, dashed, double, dotted): ``column-{key}``."""
    header = ["", *(_HEADERS[key] for key in keys)]
    row_height = max(text_size(cell, SIZE_SMALL)[1] for row in rows for cell in row) + 12
    layout = sheet.table(x, y, header, rows, gid=gid, row_height=row_height, pad=12, rule=False, multialign="right")
    for c, key in enumerate(keys, start=1):
        head, last = layout.cell(-1, c), layout.cell(len(rows) - 1, c)
        sheet.frame(Box(head.x + 3, head.y, head.w - 6, last.bottom - head.y + 2), _stage(key)[2],
                    gid=f"column-{key}", linewidth=1.3)
    return layout


def stage_tables_alt(evidence: LearnerEvidence) -> str:
    tokens = _tokens(evidence)
    parts = "; ".join(f"{_FORMULAS[key]}: " + ", ".join(f"t={t} {format_vector(_row(evidence, key, t))}"
                                                          for t in range(tokens))
                      for key in (*_HALVES[0], *_HALVES[1], "probe_logits"))
    return ("Таблицы значений этапов блока по токенам: строки — этапы обеих половин блока и проверочные логиты, "
            f"столбцы — токены. {parts}. Вход обведён сплошной рамкой, значения ветвей — штриховой, результаты "
            "остаточных сложений — двойной, логиты — пунктирной.")


# -- d. causal probabilities ------------------------------------------------------------------

@pinned_style
def causal_probabilities(evidence: LearnerEvidence) -> Figure:
    """Both heads' causal probability tables (the chapter-30 tables, without head outputs)."""
    weights = evidence.primary.value("attention_weights")[0]                    # [h, T, T]
    return causal_tables_figure(weights, None, "Каузальное внимание внутри блока: единственный этап, "
                                "смешивающий токены")


def causal_probabilities_alt(evidence: LearnerEvidence) -> str:
    return "Внимание внутри блока. " + common.causal_tables_alt(evidence.primary.value("attention_weights")[0], None)


# -- e. Pre-LN vs Post-LN ------------------------------------------------------------------------

def _rms(values: np.ndarray) -> float:
    return float(np.sqrt(np.mean(values * values)))


@pinned_style
def pre_post_contrast(evidence: LearnerEvidence, token: int = 1) -> Figure:
    """Grouped bars of ``x'`` (Pre-LN) and ``LayerNorm(x + MHA(x))`` (Post-LN) for one token."""
    token = check_token(token, _tokens(evidence), "pre/post contrast")
    p = evidence.primary
    pre, post = p.value("after_attention")[0, token], p.post_norm_first_stage[0, token]
    sheet = Sheet(WIDTH, 400)
    sheet.text(20, 18, f"Токен {token}: порядок нормализации меняет результат первой половины блока",
               gid="contrast-title", size=SIZE_TEXT, bold=True)
    ax = sheet.figure.add_axes((70 / WIDTH, 1 - 320 / 400, 480 / WIDTH, 270 / 400))
    features = np.arange(pre.shape[0])
    width, shift = 0.38, 0.21
    ax.bar(features - shift, pre, width, facecolor=SHADE, edgecolor=INK, linewidth=1.2, linestyle="-",
           gid="bars-pre", label="Pre-LN: x'")
    ax.bar(features + shift, post, width, facecolor=PAPER, edgecolor=INK, linewidth=1.2, linestyle="--",
           hatch=BAR_HATCH, hatchcolor=INK, gid="bars-post", label="Post-LN")
    for i, bar in enumerate(ax.patches):
        bar.set_gid(f"bar-{'pre' if i < len(features) else 'post'}-{i % len(features)}")
    low, high = min(0.0, pre.min(), post.min()), max(0.0, pre.max(), post.max())
    span = high - low
    ax.set_ylim(low - 0.14 * span, high + 0.14 * span)
    for values, offset, name in ((pre, -shift, "pre"), (post, shift, "post")):
        for i, value in enumerate(values):
            ax.text(i + offset, value + (0.02 * span if value >= 0 else -0.02 * span), format_number(value),
                    ha="center", va="bottom" if value >= 0 else "top", fontsize=8, color=INK,
                    gid=f"value-{name}-{i}")
    ax.axhline(0.0, color=INK, linewidth=0.8, gid="zero-line")
    ax.set_xticks(features, [f"признак {i}" for i in features], fontsize=SIZE_SMALL)
    ax.tick_params(labelsize=SIZE_SMALL, colors=INK)
    ax.set_ylabel("значение", fontsize=SIZE_SMALL, color=INK)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    post_mean = float(np.mean(post))
    lines = [
        ("Pre-LN (этот блок)", True), ("x' = x + MHA(RMSNorm(x))", False),
        (f"x'_{token} = {format_vector(pre)}", False),
        (f"поток не нормирован: RMS = {format_number(_rms(pre))}", False), ("", False),
        ("Post-LN (исходный порядок)", True), ("LayerNorm(x + MHA(x))", False),
        (f"PostNorm_{token} = {format_vector(post)}", False),
        (f"среднее = {format_number(post_mean)}, RMS = {format_number(_rms(post))}", False), ("", False),
        ("Результаты численно различаются" if p.post_norm_differs else "Результаты совпадают", True),
    ]
    for i, (content, bold) in enumerate(lines):
        sheet.text(590, 70 + i * line_height(SIZE_SMALL) * 1.35, content, gid=f"contrast-line-{i}", size=SIZE_SMALL,
                   bold=bold)
    sheet.key(20, 356, [("bar-filled", "Pre-LN: x' = x + MHA(RMSNorm(x))"),
                        ("bar-hatched", "Post-LN: LayerNorm(x + MHA(x))")], width=960)
    return sheet.figure


def pre_post_contrast_alt(evidence: LearnerEvidence, token: int = 1) -> str:
    token = check_token(token, _tokens(evidence), "pre/post contrast")
    p = evidence.primary
    pre, post = p.value("after_attention")[0, token], p.post_norm_first_stage[0, token]
    verdict = "численно различаются" if p.post_norm_differs else "совпадают"
    return (f"Сгруппированные столбцы для четырёх признаков токена {token}: серые сплошные — Pre-LN "
            f"x' = x + MHA(RMSNorm(x)) = {format_vector(pre)}, белые заштрихованные со штриховой рамкой — "
            f"Post-LN LayerNorm(x + MHA(x)) = {format_vector(post)}. Результаты {verdict}: Post-LN нормирует "
            f"сам поток (среднее {format_number(float(np.mean(post)))}), а Pre-LN нормирует только копию "
            f"для ветви и оставляет поток ненормированным (RMS {format_number(_rms(pre))}).")


# -- f. proofs --------------------------------------------------------------------------------

@pinned_style
def proofs_panel(evidence: LearnerEvidence) -> Figure:
    """The prefix proof, parameter ownership (names, shapes, scalars) and the gradient check."""
    p, params, g = evidence.primary, evidence.parameters, evidence.gradients
    output, perturbed = p.value("output")[0], p.prefix_perturbed_output[0]
    unchanged = prefix_verdicts(p)
    sheet = Sheet(WIDTH, 800)
    proof = prefix_table(sheet, 20, 8, output, perturbed, unchanged,
                         title="Меняем только последний токен: выходы блока 0 и 1 не должны измениться")
    top = proof.bottom + 22
    sheet.text(20, top, f"Параметры: {params.tensors} тензоров, {params.scalars} скаляров", gid="parameters-title",
               size=SIZE_TEXT, bold=True)
    rows = [[name, format_shape(shape), str(int(np.prod(shape)))] for name, shape in zip(params.names, params.shapes)]
    rows.append(["всего", "", str(params.scalars)])
    ptable = sheet.table(20, top + 14, ["параметр", "форма", "скаляров"], rows, gid="parameters", row_height=20)
    total = ptable.row_box(len(rows) - 1)
    sheet.line([total.x, total.right], [total.y, total.y], gid="parameters-total-rule", linewidth=0.8)
    gx = ptable.x + ptable.width + 36
    sheet.text(gx, top, f"Центральные разности: n = {g.report.total}", gid="gradients-title", size=SIZE_TEXT, bold=True)
    grows = [[check.name, str(check.coordinates), format_number(check.max_abs_error, 12)] for check in g.report.checks]
    grows.append(["всего", str(g.report.total), format_number(g.report.max_abs_error, 12)])
    gtable = sheet.table(gx, top + 14, ["тензор", "n", "max|аналит. − числ.|"], grows, gid="gradients", row_height=20)
    total = gtable.row_box(len(grows) - 1)
    sheet.line([total.x, total.right], [total.y, total.y], gid="gradients-total-rule", linewidth=0.8)
    checks = [
        ("Смещения", "нет: только gain и weight" if params.bias_free else "есть", params.bias_free),
        ("Порядок параметров", "стабилен" if params.stable_order else "нестабилен", params.stable_order),
        (f"Формула 2d + 4d² + 3d·d_ff = {params.formula_scalars}",
         "совпадает со счётом" if params.formula_scalars == params.scalars else "не совпадает",
         params.formula_scalars == params.scalars),
        (f"Допуск τ = {format_number(g.report.tolerance)}",
         "проверка пройдена" if g.passed else "проверка не пройдена", g.passed),
    ]
    grid_top = max(ptable.y + ptable.height, gtable.y + gtable.height) + 14
    grid = status_grid(sheet, 20, grid_top, checks, width=960, gid="check", columns=2)
    used = sheet.key(20, grid.bottom + 12, [("frame-solid", "выполнено / побитово без изменений"),
                                            ("frame-dashed", "изменилось"), ("hatch", "нарушено")], width=960)
    sheet.crop(grid.bottom + 12 + used + 6)
    return sheet.figure


def proofs_panel_alt(evidence: LearnerEvidence) -> str:
    p, params, g = evidence.primary, evidence.parameters, evidence.gradients
    output, perturbed = p.value("output")[0], p.prefix_perturbed_output[0]
    unchanged = prefix_verdicts(p)
    rows = prefix_alt(output, perturbed, unchanged)
    names = ", ".join(f"{name} {format_shape(shape)}" for name, shape in zip(params.names, params.shapes))
    return (f"Доказательства блока. Префикс при изменении только последнего токена: {rows}. Параметры "
            f"({params.tensors} тензоров, {params.scalars} скаляров, смещений "
            f"{'нет' if params.bias_free else 'есть'}): {names}. Проверка центральными разностями: "
            f"n = {g.report.total} координат, допуск τ = {format_number(g.report.tolerance)}, "
            f"{'пройдена' if g.passed else 'не пройдена'}.")
