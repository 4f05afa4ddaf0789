"""Слова лабораторий главы 31 (``depth_lab``, ``training_lab``): подписи схем, вердикты, заголовки таблиц."""

TEXT = {
    # how tables and figures name a wiring (depth_lab.label, depth_lab.LABELS)
    "label.pre": "Pre-RMSNorm",
    "label.post": "Post-RMSNorm",
    "label.none": "без остаточных путей",
    "label.layer.pre": "Pre-LN",
    "label.layer.post": "Post-LN",
    "label.layer.none": "без остаточных путей, LN",
    # depth_lab.summary_table, depth_lab.gradient_table
    "depth.scale": "множитель инициализации",
    "depth.wiring": "схема",
    "depth.quantity": "величина",
    "depth.layer": "блок {layer}",
    "depth.stream_rms": "RMS потока",
    "depth.gradient": "градиент",
    # training_lab.verdict
    "verdict.diverges": "расходится на шаге ~{step}",
    "verdict.stalls": "не учится",
    "verdict.barely": "почти не учится",
    "verdict.learns": "учится",
    "verdict.breaks": "учится, потом срывается",
    # training_lab.training_table, training_lab.seeds_table
    "training.wiring": "схема",
    "training.layers": "L",
    "training.lr": "η",
    "training.warmup": "разогрев",
    "training.result": "итог",
    "training.first_below": "потери < {level:g} с шага",
    "training.warmup_steps": "{warmup} шагов",
    "training.no_warmup": "нет",
    "training.never": "—",
    "training.about": "~{step}",
    "training.span": "~{first}–{last}",
    "training.run": "запуск",
    "training.seeds": "зёрна",
    "training.all": "{verdict}: {count} из {count}",
    "training.count": "{verdict}: {count}",
}
