"""Chapter 30 figures: causal multi-head attention on the worked example.

Each figure function takes ``llm_from_scratch.chapters.ch30.learner_evidence()``
(or, for the heatmaps, a ``[h, T, T]`` weights array) and returns a
``matplotlib.figure.Figure``; its sibling ``*_alt`` returns the Russian alt text.

    from llm_from_scratch.chapters.ch30 import learner_evidence
    from llm_from_scratch.plots import ch30 as plots
    evidence = learner_evidence()
    fig = plots.causal_tables(evidence)          # display(fig) in a notebook
    plots.causal_tables_alt(evidence)            # alt text next to it
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ..attention import MultiHeadAttention
from ..chapters.ch30 import INVARIANT_TOLERANCE, LearnerEvidence
from ..chapters.formatting import format_number, format_rows, format_shape, format_vector
from ..rng import SplitMix64
from ..tensor import Tensor
from . import common
from .common import (
    INK,
    LIGHT,
    MASK_HATCH,
    PAPER,
    SHADE,
    SIZE_SMALL,
    SIZE_TEXT,
    STYLE_NAMES,
    Box,
    FlowStage,
    Sheet,
    causal_tables_figure,
    check_causal_weights,
    flow_rows,
    head_style,
    pinned_style,
    prefix_alt,
    prefix_table,
    prefix_verdicts,
    status_grid,
    text_size,
)

__all__ = [
    "causal_tables",
    "causal_tables_alt",
    "output_projection",
    "output_projection_alt",
    "prefix_and_invariants",
    "prefix_and_invariants_alt",
    "projections_by_head",
    "projections_by_head_alt",
    "random_heads_heatmaps",
    "random_heads_heatmaps_alt",
    "random_layer_weights",
    "stage_flow",
    "stage_flow_alt",
]

WIDTH = 1000


def _head_columns(head: int, head_width: int) -> str:
    return ",".join(str(c) for c in range(head * head_width, (head + 1) * head_width))


# -- a. stage flow ----------------------------------------------------------------------

def _flow_stages(evidence: LearnerEvidence) -> list[FlowStage]:
    s = evidence.shapes
    return [
        FlowStage("input", "Вход X", format_shape(s.input), "solid", "[B,T,d_model]"),
        FlowStage("split", "Q, K, V по головам", format_shape(s.split), "dashed", "проекция, split_heads"),
        FlowStage("rotated", "После RoPE", format_shape(s.rotated), "dashed", "поворот только Q и K"),
        FlowStage("weights", "Вероятности внимания", format_shape(s.weights), "dashed", "softmax + каузальная маска"),
        FlowStage("head_output", "Выходы голов", format_shape(s.head_output), "dashed", "H = A·V"),
        FlowStage("merged", "После конкатенации", format_shape(s.merged), "solid", "merge_heads"),
        FlowStage("output_weight", "Выходная проекция W_O", format_shape(s.output_weight), "dotted",
                  "обучаемая матрица"),
        FlowStage("output", "Выход слоя", format_shape(s.output), "solid", "Concat(H)·W_O"),
    ]


@pinned_style
def stage_flow(evidence: LearnerEvidence) -> Figure:
    """Boxes for every stage with its shape from ``evidence.shapes``; frames tell the layout apart."""
    sheet = Sheet(WIDTH, 330)
    sheet.text(20, 22, "Формы по этапам: [B,T,d_model] → [B,h,T,d_h] → … → [B,T,d_model]",
               gid="flow-title", size=SIZE_TEXT, bold=True)
    flow_rows(sheet, _flow_stages(evidence), per_row=(4, 4), top=48, box_width=218, box_height=76, row_gap=44)
    sheet.key(20, 268, [("frame-solid", "полная ширина модели [B,T,d_model]"),
                        ("frame-dashed", "раздельные головы [B,h,T,·]"),
                        ("frame-dotted", "обучаемая матрица"), ("arrow", "следующий этап")], width=960)
    return sheet.figure


def stage_flow_alt(evidence: LearnerEvidence) -> str:
    parts = ", ".join(f"{stage.name.lower()} {stage.shape}" for stage in _flow_stages(evidence))
    return ("Схема этапов многоголового внимания со стрелками слева направо в две строки: " + parts + ". "
            "Тензоры полной ширины модели обведены сплошной рамкой, тензоры с отдельной осью голов — "
            "штриховой, обучаемая выходная матрица — пунктирной.")


# -- b. projections by head -------------------------------------------------------------

_PROJECTION_ROWS = (
    ("после проекции Q", "projected_query_heads"), ("после проекции K", "projected_key_heads"),
    ("после проекции V", "projected_value_heads"), ("после RoPE Q", "rotated_query_heads"),
    ("после RoPE K", "rotated_key_heads"),
)


@pinned_style
def projections_by_head(evidence: LearnerEvidence) -> Figure:
    """Per head: Q, K, V after the projection and Q, K after RoPE, one column per token."""
    p = evidence.primary
    heads, tokens, head_width = evidence.shapes.split[1], evidence.shapes.split[2], evidence.shapes.split[3]
    panel_h = 180
    sheet = Sheet(WIDTH, 34 + heads * (panel_h + 14) + 50)
    sheet.text(20, 18, "Проекции Q, K, V по головам; RoPE поворачивает только Q и K, V остаётся без поворота",
               gid="projections-title", size=SIZE_TEXT, bold=True)
    for head in range(heads):
        top = 34 + head * (panel_h + 14)
        rows = [[label, *(format_vector(p.value(field)[0, head, t]) for t in range(tokens))]
                for label, field in _PROJECTION_ROWS]
        header = ["", *(f"t={t}" for t in range(tokens))]
        widths = [190, *([(WIDTH - 60 - 190) / tokens] * tokens)]
        sheet.text(40, top + 16, f"Голова {head} · столбцы {_head_columns(head, head_width)} проекций",
                   gid=f"head-{head}-title", size=SIZE_TEXT, bold=True)
        layout = sheet.table(30, top + 28, header, rows, gid=f"projections-h{head}", widths=widths,
                             row_height=24)
        split = layout.cell(3, 0).y
        sheet.line([30, 30 + layout.width], [split, split], "dotted", gid=f"rope-rule-h{head}", linewidth=1.0)
        sheet.frame(Box(20, top, WIDTH - 40, panel_h), head_style(head), gid=f"head-{head}-frame", linewidth=1.6)
    sheet.key(20, sheet.height - 44, [("frame-solid", "голова 0"), ("frame-dashed", "голова 1"),
                                      ("line-dotted", "граница: ниже — после RoPE (только Q и K)")], width=960)
    return sheet.figure


def projections_by_head_alt(evidence: LearnerEvidence) -> str:
    p = evidence.primary
    heads, head_width = evidence.shapes.split[1], evidence.shapes.split[3]
    parts = []
    for head in range(heads):
        values = "; ".join(f"{label}: {format_rows(p.value(field)[0, head])}" for label, field in _PROJECTION_ROWS)
        parts.append(f"Голова {head} (столбцы {_head_columns(head, head_width)}, {STYLE_NAMES[head_style(head)]} "
                     f"рамка): {values}.")
    tokens = evidence.shapes.split[2]
    return (f"Таблицы проекций, по одной на каждую из {heads} голов внимания; строки — этапы, столбцы — токены "
            f"t=0…{tokens - 1}. " + " ".join(parts) + " Значения V не поворачиваются: RoPE применяется только к Q и K.")


# -- c. causal tables -------------------------------------------------------------------

@pinned_style
def causal_tables(evidence: LearnerEvidence) -> Figure:
    """Both heads' causal probability tables side by side, with row sums and head outputs."""
    p = evidence.primary
    weights, outputs = p.value("attention_weights")[0], p.value("head_outputs")[0]   # [h, T, T], [h, T, d_h]
    return causal_tables_figure(weights, outputs, "Каузальные вероятности внимания: одна таблица на голову")


def causal_tables_alt(evidence: LearnerEvidence) -> str:
    p = evidence.primary
    weights, outputs = p.value("attention_weights")[0], p.value("head_outputs")[0]
    return common.causal_tables_alt(weights, outputs)


# -- d. output projection ---------------------------------------------------------------

def _group_links(output_weight: np.ndarray, heads: int, head_width: int) -> list[tuple[int, int]]:
    """``(source head group, destination group)`` pairs that ``W_O`` connects (any non-zero entry)."""
    return [(g, j) for g in range(heads) for j in range(heads)
            if np.any(output_weight[g * head_width:(g + 1) * head_width, j * head_width:(j + 1) * head_width] != 0)]


@pinned_style
def output_projection(evidence: LearnerEvidence) -> Figure:
    """``W_O``'s rows grouped by the head they read, then every token row before and after ``W_O``."""
    p = evidence.primary
    merged, output, w_o = p.value("merged")[0], p.value("output")[0], p.output_weight      # [T, d], [T, d], [d, d]
    heads, tokens, head_width = evidence.shapes.split[1], evidence.shapes.split[2], evidence.shapes.split[3]
    links = _group_links(w_o, heads, head_width)
    sheet = Sheet(WIDTH, 520)

    # W_O, its rows framed by the head whose columns of the concatenation they read.
    sheet.text(20, 18, f"Выходная проекция W_O {format_shape(w_o.shape)}: строка r умножается на координату r "
               "конкатенации", gid="wo-title", size=SIZE_TEXT, bold=True)
    header = ["строка", *(f"столбец {c}" for c in range(w_o.shape[1])), "читает"]
    rows = [[f"r={r}", *(format_number(v) for v in w_o[r]), f"голову {r // head_width}"] for r in range(w_o.shape[0])]
    table = sheet.table(40, 34, header, rows, gid="wo", row_height=24)
    for head in range(heads):
        first, last = table.row_box(head * head_width), table.row_box((head + 1) * head_width - 1)
        sheet.frame(Box(first.x - 6, first.y + 2, first.w + 12, last.bottom - first.y - 4), head_style(head),
                    gid=f"wo-head-{head}-frame", linewidth=1.4)

    notes = ["Куда W_O переносит группы координат:",
             *(f"группа головы {src} → место группы {dst}" for src, dst in links),
             "Конкатенация лишь ставит выходы голов рядом;", "смешивать их может только W_O."]
    sheet.text(table.x + table.width + 40, table.y + table.height / 2, "\n".join(notes), gid="wo-notes",
               size=SIZE_SMALL)
    # One block per token: the concatenation (one framed group per head) above, the row after W_O below.
    top = table.y + table.height + 26
    sheet.text(20, top, "Строки токенов: сверху — до W_O (конкатенация [голова 0 | голова 1]), снизу — после W_O",
               gid="rows-title", size=SIZE_TEXT, bold=True)
    group_w = max(text_size(format_vector(v[t, g * head_width:(g + 1) * head_width]), SIZE_SMALL)[0]
                  for v in (merged, output) for t in range(tokens) for g in range(heads)) + 8
    block_w = heads * group_w + (heads - 1) * 8
    block_gap = (WIDTH - 40 - tokens * block_w) / max(tokens - 1, 1)
    box_h, drop = 26, 56
    for t in range(tokens):
        x0 = 20 + t * (block_w + block_gap)
        sheet.text(x0 + block_w / 2, top + 26, f"t={t}", gid=f"row-label-t{t}", size=SIZE_TEXT, ha="center",
                   bold=True)
        before_y, after_y = top + 40, top + 40 + box_h + drop
        for g in range(heads):
            columns = slice(g * head_width, (g + 1) * head_width)
            gx = x0 + g * (group_w + 8)
            before = Box(gx, before_y, group_w, box_h)
            sheet.frame(before, head_style(g), gid=f"before-t{t}-g{g}", linewidth=1.3)
            sheet.text(before.cx, before.cy, format_vector(merged[t, columns]), gid=f"before-t{t}-g{g}-text",
                       size=SIZE_SMALL, ha="center")
            sources = [src for src, dst in links if dst == g]
            after = Box(gx, after_y, group_w, box_h)
            sheet.frame(after, head_style(sources[0]) if len(sources) == 1 else "dotted", gid=f"after-t{t}-g{g}",
                        linewidth=1.3)
            sheet.text(after.cx, after.cy, format_vector(output[t, columns]), gid=f"after-t{t}-g{g}-text",
                       size=SIZE_SMALL, ha="center")
        for src, dst in links:
            start = (x0 + src * (group_w + 8) + group_w / 2, before_y + box_h + 3)
            end = (x0 + dst * (group_w + 8) + group_w / 2, after_y - 3)
            sheet.arrow([start, end], head_style(src), gid=f"link-t{t}-g{src}-g{dst}", linewidth=1.2)
        sheet.text(x0 + block_w / 2, before_y + box_h + drop / 2, "· W_O", gid=f"map-label-t{t}", size=SIZE_SMALL,
                   ha="center", backdrop=True)
    bottom = top + 40 + 2 * box_h + drop + 18
    used = sheet.key(20, bottom, [("frame-solid", "координаты головы 0"), ("frame-dashed", "координаты головы 1"),
                                  ("frame-dotted", "смесь голов"), ("arrow", "куда W_O переносит группу")], width=960)
    sheet.crop(bottom + used + 6)
    return sheet.figure


def output_projection_alt(evidence: LearnerEvidence) -> str:
    p = evidence.primary
    merged, output, w_o = p.value("merged")[0], p.value("output")[0], p.output_weight
    heads, tokens, head_width = evidence.shapes.split[1], evidence.shapes.split[2], evidence.shapes.split[3]
    links = ", ".join(f"группа головы {src} → место группы {dst}" for src, dst in _group_links(w_o, heads, head_width))
    rows = "; ".join(f"t={t}: {format_vector(merged[t])} → {format_vector(output[t])}" for t in range(tokens))
    readers = ", ".join(f"строки {h * head_width}–{(h + 1) * head_width - 1} читают координаты головы {h} "
                        f"({STYLE_NAMES[head_style(h)]} рамка)" for h in range(heads))
    return (f"Матрица выходной проекции W_O по строкам: {format_rows(w_o)}; {readers}. Куда W_O переносит группы: "
            f"{links}. Строки токенов до W_O (конкатенация) и после: {rows}. Конкатенация лишь ставит выходы "
            "голов рядом, смешивать или переставлять их может только W_O, поэтому это два разных этапа.")


# -- e. prefix proof and invariants ---------------------------------------------------------

def _invariants(evidence: LearnerEvidence) -> list[tuple[str, str, bool]]:
    p, g = evidence.primary, evidence.gradients
    return [
        ("Разделение с последующим объединением",
         "точно восстанавливает тензор" if p.split_merge_bitwise else "не восстанавливает тензор",
         p.split_merge_bitwise),
        ("Влияние выходов голов друг на друга",
         "отсутствует до выходной проекции" if p.head_isolation_before_output else "есть до выходной проекции",
         p.head_isolation_before_output),
        ("Вероятности будущих ключей",
         "точно равны нулю" if p.future_probabilities_zero else "не равны нулю", p.future_probabilities_zero),
        (f"Общий сдвиг позиций (допуск ε = {format_number(INVARIANT_TOLERANCE, 12)})",
         f"{'сохраняет' if p.common_offset_weights_preserved else 'меняет'} вероятности внимания: "
         f"max|Δ| = {format_number(p.common_offset_max_difference, 12)}",
         p.common_offset_weights_preserved),
        ("Обучаемые скалярные параметры",
         f"{evidence.parameters.count} (формула 4·d_model² = {evidence.parameters.formula_count})",
         evidence.parameters.count == evidence.parameters.formula_count),
        ("Координаты, проверенные центральными разностями",
         f"{g.total}: {'все в пределах допуска' if g.passed else 'есть расхождение'}", g.passed),
    ]


@pinned_style
def prefix_and_invariants(evidence: LearnerEvidence) -> Figure:
    """Output rows before/after changing only the last token, and the layer's invariants."""
    p = evidence.primary
    output, perturbed = p.value("output")[0], p.prefix_perturbed_output[0]
    unchanged = prefix_verdicts(p)
    sheet = Sheet(WIDTH, 600)
    proof = prefix_table(sheet, 20, 8, output, perturbed, unchanged,
                         title="Меняем только последний токен: строки выхода 0 и 1 не должны измениться")
    top = proof.bottom + 24
    sheet.text(20, top, "Инварианты сборки", gid="invariants-title", size=SIZE_TEXT, bold=True)
    grid = status_grid(sheet, 20, top + 16, _invariants(evidence), width=960, gid="invariant")
    used = sheet.key(20, grid.bottom + 12, [("frame-solid", "выполнено / побитово без изменений"),
                                           ("frame-dashed", "изменилось"), ("hatch", "нарушено")], width=960)
    sheet.crop(grid.bottom + 12 + used + 6)
    return sheet.figure


def prefix_and_invariants_alt(evidence: LearnerEvidence) -> str:
    p = evidence.primary
    output, perturbed = p.value("output")[0], p.prefix_perturbed_output[0]
    unchanged = prefix_verdicts(p)
    rows = prefix_alt(output, perturbed, unchanged)
    checks = "; ".join(f"{label.lower()}: {verdict}" for label, verdict, _ in _invariants(evidence))
    return ("Сверху таблица доказательства префикса: исходная строка выхода и строка после изменения только "
            f"последнего токена. {rows}. Снизу инварианты сборки: {checks}.")


# -- f. random heads ------------------------------------------------------------------------

def random_layer_weights(heads: int = 4, tokens: int = 8, model_width: int = 16, seed: int = 30,
                         input_scale: float = 4.0, rope_base: float = 10000.0) -> np.ndarray:
    """``[h, T, T]`` causal probabilities of a fresh ``MultiHeadAttention.new`` layer.

    Weights and the input both come from one ``SplitMix64(seed)``: the layer draws first,
    then ``T * d_model`` input values uniform on ``[-input_scale, input_scale)``.
    """
    rng = SplitMix64(seed)
    layer = MultiHeadAttention.new("random", model_width, heads, tokens, rope_base, rng)
    x = (2.0 * rng.next_f64(tokens * model_width) - 1.0) * input_scale
    return layer.forward(Tensor(x.reshape(1, tokens, model_width))).attention_weights.value[0]


@pinned_style
def random_heads_heatmaps(attention_weights: object, *, title: str | None = None) -> Figure:
    """One greyscale heatmap per head of ``[h, T, T]`` probabilities; masked cells (k > q) hatched."""
    weights = check_causal_weights(attention_weights, "random heads heatmaps")
    heads, tokens = weights.shape[0], weights.shape[1]
    sheet = Sheet(WIDTH, 342)
    sheet.text(20, 16, title or f"Вероятности внимания {heads} голов случайного слоя, {tokens} токенов",
               gid="heatmaps-title", size=SIZE_TEXT, bold=True)
    left, right, top, bottom = 60, 90, 52, 84          # pixels around the row of heatmaps
    gap = 26
    side = min((WIDTH - left - right - gap * (heads - 1)) / heads, sheet.height - top - bottom)
    image = None
    for head in range(heads):
        x0 = left + head * (side + gap)
        ax = sheet.figure.add_axes((x0 / WIDTH, 1 - (top + side) / sheet.height, side / WIDTH, side / sheet.height))
        image = ax.imshow(weights[head], cmap="Greys", vmin=0.0, vmax=1.0, interpolation="nearest")
        image.set_gid(f"heatmap-h{head}")
        for q in range(tokens):
            for k in range(q + 1, tokens):
                ax.add_patch(Rectangle((k - 0.5, q - 0.5), 1, 1, facecolor=PAPER, edgecolor=LIGHT, linewidth=0.5,
                                       hatch=MASK_HATCH, hatchcolor=SHADE, gid=f"heatmap-h{head}-q{q}-k{k}-masked"))
        ax.set_title(f"голова {head}", fontsize=SIZE_TEXT, color=INK)
        ax.set_xticks(range(tokens))
        ax.set_yticks(range(tokens))
        ax.tick_params(labelsize=7.5, length=2, colors=INK)
        ax.set_xlabel("ключ k", fontsize=SIZE_SMALL, color=INK, labelpad=1)
        if head == 0:
            ax.set_ylabel("запрос q", fontsize=SIZE_SMALL, color=INK)
    cax = sheet.figure.add_axes(((WIDTH - right + 20) / WIDTH, 1 - (top + side) / sheet.height, 14 / WIDTH,
                                 side / sheet.height))
    bar = sheet.figure.colorbar(image, cax=cax)
    bar.set_label("вероятность", fontsize=SIZE_SMALL, color=INK)
    bar.ax.tick_params(labelsize=7.5, colors=INK)
    bar.outline.set_edgecolor(INK)
    sheet.key(20, sheet.height - 40, [("hatch", "закрытый ключ (каузальная маска, вероятность 0)"),
                                      ("fill", "темнее — больше вероятность")], width=960)
    return sheet.figure


def random_heads_heatmaps_alt(attention_weights: object) -> str:
    weights = check_causal_weights(attention_weights, "random heads heatmaps")
    heads, tokens = weights.shape[0], weights.shape[1]
    last = tokens - 1  # the last query sees every key: where each head looks differs most there
    parts = []
    for head in range(heads):
        key = int(np.argmax(weights[head, last]))
        parts.append(f"голова {head}: последний запрос {last} сильнее всего смотрит на ключ {key} "
                     f"(вероятность {format_number(weights[head, last, key])})")
    return (f"{heads} тепловые карты в оттенках серого, по одной на голову, {tokens}×{tokens} ячеек: строки — "
            "запросы q, столбцы — ключи k, темнее — больше вероятность. Ячейки над диагональю закрыты "
            "каузальной маской и заштрихованы. " + "; ".join(parts) + ".")
