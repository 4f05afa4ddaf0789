"""Words the figures of both chapters share (English edition): the axis labels of the attention heatmap."""

TEXT = {
    "heatmap.key": "key k",
    "heatmap.query": "query q",
}
