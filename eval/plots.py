"""Pictures of tournament results (matplotlib, imported only when a picture is drawn)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def pairwise_heatmap(results: dict[str, Any], path: str | Path) -> Path:
    """A PNG heatmap of the pairwise scores in ``results`` (row bot's score against the column bot).

    The pairwise score of a against b counts, over the games they shared, 1 when a finished ahead of b,
    1/2 when level and 0 behind (in a duel: the ordinary score). Empty cells: the two never met.
    """
    try:
        import matplotlib
    except ImportError as error:
        raise ImportError(f"the heatmap needs matplotlib ({error}): pip install matplotlib") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    labels = [label if len(label) <= 28 else label[:12] + "…" + label[-15:] for label in results["bots"]]
    matrix = np.array([[np.nan if value is None else value for value in row] for row in results["pair_matrix"]],
                      dtype=float)
    size = max(4.0, 0.9 * len(labels) + 2.5)
    figure, axes = plt.subplots(figsize=(size, size * 0.85))
    image = axes.imshow(np.ma.masked_invalid(matrix), cmap="RdYlGn", vmin=0.0, vmax=1.0)
    axes.set_xticks(range(len(labels)), labels=labels, rotation=45, ha="right")
    axes.set_yticks(range(len(labels)), labels=labels)
    axes.set_xlabel("opponent")
    axes.set_ylabel("bot")
    for i in range(len(labels)):
        for j in range(len(labels)):
            if not np.isnan(matrix[i, j]):
                axes.text(j, i, f"{matrix[i, j]:.2f}", ha="center", va="center", fontsize=9)
    axes.set_title(f"{results['game']}: pairwise score ({results['games']} games)")
    figure.colorbar(image, ax=axes, fraction=0.046, pad=0.04)
    figure.tight_layout()
    path = Path(path)
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path
