"""Слова рисунков главы 30 (русское издание): ``{"рисунок.роль": текст}``; ключи без точки — общие для
нескольких рисунков главы. Текст с полями ``{имя}`` заполняет ``format``; остальные (в том числе с
формулами ``$...$``) выводятся как есть. Обозначения (X, Q, K, V, W_O, формы тензоров) остаются в коде.
"""

TEXT = {
    "query_axis": "позиция запроса m",
    "key_axis": "позиция ключа n",
    "masked_key": "ключ закрыт каузальной маской",
    "attention_weight": "вес внимания",
    "head": "голова {head}",
    "whole_layer.identity": "в примере $W=I$",
    "whole_layer.softmax": "softmax,\nмаска",
    "whole_layer.no_rotation": "без поворота",
    "two_jobs.previous": "голова 0:\nпредыдущий токен",
    "two_jobs.first": "голова 1:\nпервый токен",
    "two_jobs.one_head": "одна голова\nна всю ширину",
    "head_split.reads_all": "столбец 0 проекции читает все признаки строки X",
    "score_spread.spread": "разброс оценок (ст. откл.)",
    "score_spread.raw": r"оценки $q\cdot k$",
    "score_spread.scaled": r"оценки $q\cdot k\,/\sqrt{d_h}$",
    "score_spread.uniform": "поровну: 1/{tokens}",
    "score_spread.top_weight": "средний наибольший вес",
    "score_spread.width": r"ширина головы $d_h$",
    "rope_circle.position": "позиция p",
    "rope_relative.title": r"$q_m\cdot k_n$ после RoPE",
    "rope_relative.offset": "смещение m − n",
    "rope_relative.score": r"оценка $q_m\cdot k_n$",
    "output_mixing.rows": "$u_r$, строка r:\nголова 0 | голова 1",
    "learned_losses.bound": "предел одной головы: {bound:.3f}",
    "learned_losses.step": "шаг обучения",
    "learned_losses.loss": "средний квадрат ошибки\nна новых последовательностях",
    "output_pairs.title": "{layer}: {output}",
    "output_pairs.outputs": ("выход $y_0$", "выход $y_4$"),
    "output_pairs.targets": ("цель $z_{m-1}$ (предыдущий токен)", "цель $z_0$ (первый токен)"),
    "output_pairs.exact": "$y = z$: выход равен цели",
    "output_pairs.points": "строка m = 2…5 одной последовательности",
}
