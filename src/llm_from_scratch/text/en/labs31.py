"""The words of chapter 31's labs (``depth_lab``, ``training_lab``), English edition: placement labels, verdicts,
table headers."""

TEXT = {
    # how tables and figures name a placement of the norm (depth_lab.label, depth_lab.LABELS)
    "label.pre": "Pre-RMSNorm",
    "label.post": "Post-RMSNorm",
    "label.none": "no residual connections",
    "label.layer.pre": "Pre-LN",
    "label.layer.post": "Post-LN",
    "label.layer.none": "no residual connections, LN",
    # depth_lab.summary_table, depth_lab.gradient_table
    "depth.scale": "initialization factor",
    "depth.wiring": "placement",
    "depth.quantity": "quantity",
    "depth.layer": "block {layer}",
    "depth.stream_rms": "stream RMS",
    "depth.gradient": "gradient",
    # training_lab.verdict
    "verdict.diverges": "blows up at step ~{step}",
    "verdict.stalls": "does not learn",
    "verdict.barely": "barely learns",
    "verdict.learns": "learns",
    "verdict.breaks": "learns, then regresses",
    # training_lab.training_table, training_lab.seeds_table
    "training.wiring": "placement",
    "training.layers": "L",
    "training.lr": "η",
    "training.warmup": "warm-up",
    "training.result": "result",
    "training.first_below": "loss < {level:g} from step",
    "training.warmup_steps": "{warmup} steps",
    "training.no_warmup": "none",
    "training.never": "—",
    "training.about": "~{step}",
    "training.span": "~{first}–{last}",
    "training.run": "run",
    "training.seeds": "seeds",
    "training.all": "{verdict}: {count} of {count}",
    "training.count": "{verdict}: {count}",
}
