"""The one plotting module: every function returns a captioned Figure, the theme is applied,
figures display under Agg, rates start at 0, legends sit outside the axes, and no other module or
notebook holds plotting code."""

from __future__ import annotations

import re
import warnings
from typing import Any
from unittest import mock

import matplotlib
import numpy as np
import pandas as pd
import pytest

from regime_core import paths
from regime_core.book import figures
from tools.bookcheck.prose import caption_problems

matplotlib.use("Agg")


def _check(fig: figures.Figure, name: str) -> None:
    assert isinstance(fig, figures.Figure)
    assert fig.name == name
    assert len(fig.caption) > 40 and fig.caption.endswith(".")
    for ax in fig.figure.axes:
        assert ax.get_legend() is None, f"{name}: a legend inside the axes"
    assert b"<svg " in fig.svg()
    fig.close()


def _shares() -> pd.DataFrame:
    rows = []
    for dataset in ("hotpotqa", "musique"):
        for native_type, split in (("all", (0.5, 0.3, 0.2)), ("bridge", (0.1, 0.8, 0.1))):
            for regime, share in zip(("Q-dominant", "B-dominant", "neither"), split, strict=True):
                rows.append(
                    {"dataset": dataset, "native_type": native_type, "regime": regime,
                     "share": share, "count": 1, "n": 10}
                )  # fmt: skip
    return pd.DataFrame(rows)


def _t2_table(seed: int = 0) -> pd.DataFrame:
    """A synthetic T2 outcome table: two datasets, two encoders, 60 questions each."""
    rng = np.random.default_rng(seed)
    rows = []
    for encoder in ("minilm", "tfidf"):
        for dataset in ("hotpotqa", "musique"):
            for i in range(60):
                p1, p2 = bool(i % 3 == 0), bool(i % 2 == 0)
                regime = "Q-dominant" if p1 else ("B-dominant" if p2 else "neither")
                q = float(rng.random() < (0.9 if p1 else 0.3))
                union = float(rng.random() < (0.9 if p1 or p2 else 0.3))
                for arm, hit in (("q", q), ("bridge", union), ("union", union)):
                    rows.append(
                        {"encoder": encoder, "dataset": dataset, "qid": f"{dataset}-{i}",
                         "arm": arm, "hit@5": hit, "native_type": "bridge", "parallel": False,
                         "p1": p1, "p2": p2, "regime": regime, "entity_is_title": False}
                    )  # fmt: skip
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def t2() -> tuple[Any, pd.DataFrame, Any]:
    from regime_core.experiments.t2_regime_decomposition import T2Config, analyse_t2

    cfg = T2Config(bootstrap_resamples=50, min_cell_n=5, datasets=("hotpotqa", "musique"))
    table = _t2_table()
    return analyse_t2(table, cfg), table, cfg


def test_theme_is_seaborn_colorblind_with_legible_fonts() -> None:
    figures.use_theme.cache_clear()
    figures.use_theme()
    rc = matplotlib.rcParams
    first = matplotlib.colors.to_hex(rc["axes.prop_cycle"].by_key()["color"][0])
    assert first.lower() == figures.PALETTE[0].lower()
    for key in ("xtick.labelsize", "ytick.labelsize", "legend.fontsize", "axes.labelsize"):
        assert float(rc[key]) >= 10, key


def test_regime_shares_has_readable_horizontal_labels() -> None:
    fig = figures.regime_shares(_shares())
    ax = fig.figure.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert "HotpotQA · all types" in labels and "MuSiQue · bridge" in labels
    assert ax.get_xlim()[0] == 0
    _check(fig, "regime_shares")


def test_t2_figures_and_the_key_figure(t2: tuple[Any, pd.DataFrame, Any]) -> None:
    result, table, cfg = t2
    _check(figures.t2_hits(result), "t2_hits_by_cell")
    deltas = figures.t2_deltas(result, "union_vs_q")
    assert "either direction" in deltas.caption and "Holm-adjusted over all" in deltas.caption
    assert "Holm" in deltas.caption
    _check(deltas, "t2_delta_union_vs_q")
    by_regime = figures.regime_deltas(table, cfg)
    assert set(by_regime["regime"]) == {"Q-dominant", "B-dominant", "neither"}
    assert (by_regime["ci_lo"] <= by_regime["diff"]).all()
    assert (by_regime["diff"] <= by_regime["ci_hi"]).all()
    # Q-dominant pools T2's two P1 cells: its n is their sum
    cells = result.cells
    q_cells = cells[(cells["encoder"] == "minilm") & (cells["dataset"] == "hotpotqa") & cells["p1"]]
    q_row = by_regime[
        (by_regime["encoder"] == "minilm")
        & (by_regime["dataset"] == "hotpotqa")
        & (by_regime["regime"] == "Q-dominant")
    ]
    assert int(q_row["n"].iloc[0]) == int(q_cells["n"].sum())
    key = figures.key_union_vs_q(by_regime)
    assert [ax.get_title() for ax in key.figure.axes] == ["MiniLM-L6", "TF-IDF"]
    _check(key, "key_union_vs_q")


def test_forest_fills_significant_markers_in_either_direction() -> None:
    frame = pd.DataFrame(
        {"d": [-0.452, 0.2, 0.01], "lo": [-0.6, 0.1, -0.1], "hi": [-0.3, 0.3, 0.1],
         "p": [0.0001, 0.001, 0.9]}
    )  # fmt: skip
    fig = figures.forest(frame, labels=["a", "b", "c"], diff="d", lo="lo", hi="hi", p="p")
    faces = [tuple(np.round(c.get_facecolors()[0], 3)) for c in fig.axes[0].collections]
    white = (1.0, 1.0, 1.0, 1.0)
    assert faces[0] != white and faces[1] != white and faces[2] == white


def test_teaching_figures_plot_hit1_and_hit5_from_zero() -> None:
    summary = pd.DataFrame(
        {"regime": ["B-dominant"] * 2 + ["Q-dominant"] * 2, "arm": ["q", "union"] * 2,
         "n": [30] * 4, "hit@1": [0.2, 0.9, 0.95, 0.9], "hit@5": [0.9, 1.0, 1.0, 1.0]}
    )  # fmt: skip
    fig = figures.regime_arms(summary, title="toy world", name="regimes_toy")
    assert [ax.get_title() for ax in fig.figure.axes] == ["hit@1", "hit@5"]
    assert all(ax.get_ylim()[0] == 0 for ax in fig.figure.axes)
    _check(fig, "regimes_toy")
    sweep = summary.assign(alpha=0.25)
    sweep = pd.concat([sweep, summary.assign(alpha=1.0)], ignore_index=True)
    _check(figures.sweep(sweep, "alpha", k=1, name="sweep_alpha"), "sweep_alpha")
    knockout = pd.concat(
        [summary.assign(relation_sentence="kept"),
         summary.assign(relation_sentence="removed")], ignore_index=True,
    )  # fmt: skip
    _check(figures.knockout_bars(knockout), "knockout")


def test_ablation_figures() -> None:
    sweep = pd.DataFrame(
        [{"dataset": d, "alpha": a, "hit_q": 0.5, "hit_union": 0.5 + a / 4,
          "hit_routed": 0.55, "hit_oracle": 0.7} for d in ("musique", "hotpotqa")
         for a in (0.0, 0.5, 1.0)]
    )  # fmt: skip
    fig = figures.alpha_sweep(sweep, alpha=0.25)
    assert all(ax.get_ylim()[0] == 0 for ax in fig.figure.axes)
    assert "ring" not in fig.caption and caption_problems(fig) == []
    _check(fig, "alpha_sweep")
    # one row of panels per encoder, the router's best α ringed in each panel
    per_encoder = pd.concat([sweep.assign(encoder=e) for e in ("minilm", "tfidf")])
    best = pd.DataFrame(
        [{"encoder": e, "dataset": d, "best_alpha": 0.5} for e in ("minilm", "tfidf")
         for d in ("musique", "hotpotqa")]
    )  # fmt: skip
    fig = figures.alpha_sweep(per_encoder, alpha=0.25, best=best)
    assert len(fig.figure.axes) == 4
    assert "per dataset and encoder" in fig.caption and "hollow black ring" in fig.caption
    assert caption_problems(fig) == []
    rings = [
        line
        for ax in fig.figure.axes
        for line in ax.get_lines()
        if line.get_markerfacecolor() == "none"
    ]
    assert [tuple(r.get_xdata()) for r in rings] == [(0.5,)] * 4
    _check(fig, "alpha_sweep")
    lofo = pd.DataFrame(
        [{"without": w, "dataset": d, "routed_vs_q_diff": 0.01} for w in ("none", "comparison_cues")
         for d in ("musique", "hotpotqa")]
    )  # fmt: skip
    _check(figures.leave_one_feature_out(lofo), "leave_one_feature_out")


def test_specification_curve() -> None:
    rows = pd.DataFrame(
        {"estimate": [0.1, -0.05, np.nan], "ci_lo": [0.0, -0.1, np.nan],
         "ci_hi": [0.2, 0.0, np.nan], "verdict": ["reproduced", "not reproduced", "degenerate"],
         "primary": [True, False, False], "pool": ["question", "corpus", "question"]}
    )  # fmt: skip
    fig = figures.specification_curve(
        rows, {"pool": ["question", "corpus"]}, title="t3_knockout", estimate_label="Δ, with CI",
        name="spec_curve_t3_knockout",
    )  # fmt: skip
    assert fig.figure.legends  # the verdict key, above the curve
    _check(fig, "spec_curve_t3_knockout")


def test_show_displays_the_svg_and_its_caption_under_agg(tmp_path) -> None:
    from IPython.display import Markdown

    from regime_core.book.figures import encodings

    fig = figures.regime_shares(_shares())
    with mock.patch("IPython.display.display") as display:
        figures.show(fig)
    shown = [call.args[0] for call in display.call_args_list]
    assert list(shown[0]) == ["image/svg+xml"] and display.call_args_list[0].kwargs["raw"]
    assert isinstance(shown[1], Markdown) and fig.caption in shown[1].data
    (tmp_path / "shown.svg").write_text(shown[0]["image/svg+xml"], encoding="utf-8")
    carried = encodings.figure_text(tmp_path / "shown.svg")  # what the book's page reads
    assert carried[encodings.ALT_KEY] == fig.alt and carried[encodings.CAPTION_KEY] == fig.caption


def test_a_figure_has_the_same_bytes_every_time_it_is_made() -> None:
    first, second = figures.regime_shares(_shares()), figures.regime_shares(_shares())
    assert first.svg() == second.svg()
    assert b"<dc:date>" not in first.svg() and b"Matplotlib v" not in first.svg()
    first.close()
    second.close()


def test_save_writes_the_named_svg_with_its_glyphs_as_paths(tmp_path) -> None:
    fig = figures.regime_shares(_shares())
    path = fig.save(tmp_path)
    assert path == tmp_path / "regime_shares.svg" and path.is_file()
    assert b"<text" not in path.read_bytes()  # no text left to a font the reader may lack
    fig.close()


def test_quiet_silences_progress_reports_only() -> None:
    import os

    before = os.environ.get("TQDM_DISABLE")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with figures.quiet():
            assert os.environ["TQDM_DISABLE"] == "1"
            warnings.warn("IProgress not found. Please update jupyter", UserWarning, stacklevel=1)
            warnings.warn("a real problem", RuntimeWarning, stacklevel=1)
    assert [str(w.message) for w in caught] == ["a real problem"]
    assert os.environ.get("TQDM_DISABLE") == before


# --- every figure: caption against what is drawn, words for labels, legible on a phone ---------


def _t1_result() -> Any:
    from types import SimpleNamespace

    fitted = pd.DataFrame(
        [
            {"encoder": e, "dataset": d, "native_type": "all", "n": 40,
             "r2_probit": r, "r2_probit_lo": r - 0.3, "r2_probit_hi": min(1.0, r + 0.05),
             "r2_logistic": r - 0.01, "r2_logistic_lo": r - 0.1, "r2_logistic_hi": r + 0.02}
            for (e, d), r in zip(
                [("minilm", "hotpotqa"), ("tfidf", "musique"), ("minilm", "musique")],
                (0.78, 0.93, 0.98), strict=True,
            )
        ]
    )  # fmt: skip
    rng = np.random.default_rng(0)
    points = pd.concat(
        [
            pd.DataFrame({"encoder": r.encoder, "dataset": r.dataset, "native_type": "all",
                          "margin": rng.normal(0.1, 0.05, 30), "auc": rng.random(30)})
            for r in fitted.itertuples()
        ]
    )  # fmt: skip
    cells = fitted.assign(fitted=[True, True, False], scale_probit=0.05)
    config = SimpleNamespace(r2_threshold=0.9, margin="margin")
    return SimpleNamespace(fitted=fitted, cells=cells, points=points, config=config)


def _t3_result() -> Any:
    from types import SimpleNamespace

    rows = [
        {"comparison": c, "encoder": e, "dataset": d, "drop": 0.1, "ci_lo": 0.02, "ci_hi": 0.2,
         "p_holm": p}
        for c in ("union_vs_knockout", "union_vs_entity")
        for e, p in (("minilm", 0.001), ("tfidf", 0.5))
        for d in ("hotpotqa", "musique", "all")
    ]  # fmt: skip
    config = SimpleNamespace(k=5, significance=0.05, subset="b_dominant")
    return SimpleNamespace(comparisons=pd.DataFrame(rows), config=config)


def _routing() -> tuple[Any, Any, Any]:
    from types import SimpleNamespace

    rng = np.random.default_rng(1)
    hits = {p: rng.random(50) < 0.5 for p in ("q", "union", "routed", "oracle")}
    outcome = SimpleNamespace(hits=hits)
    config = SimpleNamespace(k=5, n_splits=5)
    training = SimpleNamespace(
        config=config,
        outcome=outcome,
        data=SimpleNamespace(dataset="2wikimultihopqa"),
        coefficients=lambda: {"comparison_cues": -0.4, "b_rel_has_new_entity": 0.8},
    )
    transfer = SimpleNamespace(config=config, outcomes={"musique": outcome, "hotpotqa": outcome})
    agreement = pd.DataFrame(
        {"relation_source": "all", "dataset": ["musique", "hotpotqa"], "selected": [0.6, 0.7],
         "first_sentence": [0.5, 0.4], "chance": [0.2, 0.25]}
    )  # fmt: skip
    return training, transfer, agreement


def _latency(javascript: bool = True) -> Any:
    from regime_core.router.latency import LatencyResult

    rng = np.random.default_rng(3)
    warm = rng.lognormal(np.log(1.2e-4), 0.5, (5, 60))
    cold = rng.lognormal(np.log(4e-4), 0.4, 6)
    return LatencyResult(
        n_questions={"hotpotqa": 30, "musique": 30},
        python_warm=warm,
        python_cold=cold,
        js_warm=warm / 3 if javascript else None,
        js_cold=cold * 2 if javascript else None,
        machine={
            "cpu": "test",
            "cores": 2,
            "python": "3.12",
            "node": "v20",
            "load_average_1min": "1",
        },
    )


def _many_readings(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(2)
    estimate = rng.normal(0.05, 0.04, n)
    return pd.DataFrame(
        {"estimate": estimate, "ci_lo": estimate - 0.05, "ci_hi": estimate + 0.05,
         "verdict": rng.choice(["reproduced", "direction only", "not reproduced"], n),
         "primary": [True] + [False] * (n - 1),
         "pool": rng.choice(["question", "corpus"], n), "level": rng.choice(["all", "hotpotqa"], n)}
    )  # fmt: skip


def _every_figure(t2: tuple[Any, pd.DataFrame, Any]) -> list[figures.Figure]:
    # the checks below hold every figure at once (their callers close them), so pyplot's
    # warning about more than 20 open figures is expected here
    with matplotlib.rc_context({"figure.max_open_warning": 0}):
        return _make_every_figure(t2)


def _make_every_figure(t2: tuple[Any, pd.DataFrame, Any]) -> list[figures.Figure]:
    result, table, cfg = t2
    training, transfer, agreement = _routing()
    breakdown = pd.DataFrame({"native_type": ["bridge", "comparison"], "n": [30, 20],
                              "share_union": [0.7, 0.1]})  # fmt: skip
    summary = pd.DataFrame(
        {"regime": ["B-dominant"] * 2 + ["Q-dominant"] * 2, "arm": ["q", "union"] * 2,
         "n": [30] * 4, "hit@1": [0.2, 0.9, 0.95, 0.9], "hit@5": [0.9, 1.0, 1.0, 1.0]}
    )  # fmt: skip
    knockout = pd.concat(
        [summary.assign(relation_sentence="kept"), summary.assign(relation_sentence="removed")],
        ignore_index=True,
    )
    alpha = pd.concat([summary.assign(alpha=a) for a in (0.0, 0.5, 1.0)], ignore_index=True)
    sweep = pd.DataFrame(
        [{"dataset": d, "alpha": a, "hit_q": 0.5, "hit_union": 0.5 + a / 4,
          "hit_routed": 0.55, "hit_oracle": 0.7} for d in ("musique", "hotpotqa")
         for a in (0.0, 0.5, 1.0)]
    )  # fmt: skip
    lofo = pd.DataFrame(
        [{"without": w, "dataset": d, "routed_vs_q_diff": 0.01} for w in ("none", "comparison_cues")
         for d in ("musique", "hotpotqa")]
    )  # fmt: skip
    knobs = {"pool": ["question", "corpus"], "level": ["all", "hotpotqa"]}
    with mock.patch("regime_core.experiments.router_train.breakdown", return_value=breakdown):
        router_training = figures.router_training(training)
    return [
        figures.regime_shares(_shares()),
        figures.t1_scatter(_t1_result()),
        figures.t1_r2(_t1_result()),
        figures.t2_hits(result),
        figures.t2_deltas(result, "union_vs_q"),
        figures.key_union_vs_q(figures.regime_deltas(table, cfg)),
        figures.t3_drops(_t3_result(), "union_vs_knockout"),
        figures.t3_drops(_t3_result(), "union_vs_entity"),
        figures.selector_agreement(agreement),
        router_training,
        figures.router_coefficients(training),
        figures.zero_shot_hits(transfer),
        # the book's: one row of panels per encoder (one row alone: test_ablation_figures)
        figures.alpha_sweep(
            pd.concat([sweep.assign(encoder=e) for e in ("minilm", "tfidf")]), alpha=0.25,
            best=pd.DataFrame([{"encoder": "tfidf", "dataset": "musique", "best_alpha": 1.0}]),
        ),
        figures.leave_one_feature_out(lofo),
        figures.specification_curve(
            _many_readings(12), knobs, title="T3: a claim", estimate_label="Δ hit@5 (pp)",
            percent=True,
        ),
        figures.specification_curve(
            _many_readings(112), knobs, title="T3: a claim", estimate_label="Δ hit@5 (pp)",
            percent=True, name="spec_curve_many",
        ),
        figures.regime_arms(summary, title="toy world", name="regimes_toy"),
        figures.sweep(alpha, "alpha", k=1, name="sweep_alpha"),
        figures.knockout_bars(knockout),
        figures.routing_latency(_latency()),
        figures.alpha_transfer(_transfer_numbers()),
    ]  # fmt: skip


def _figure_functions() -> set[str]:
    import inspect

    from regime_core.book.figures import claims, robustness, router, teaching

    return {
        name
        for module in (claims, robustness, router, teaching)
        for name, obj in vars(module).items()
        if inspect.isfunction(obj)
        and obj.__module__ == module.__name__
        and not name.startswith(("_", "plot_"))
        and inspect.signature(obj).return_annotation in ("Figure", figures.Figure)
    }


def test_every_figure_function_is_checked(t2: tuple[Any, pd.DataFrame, Any]) -> None:
    made = _every_figure(t2)
    covered = {
        "regime_shares", "t1_scatter", "t1_r2", "t2_hits", "t2_deltas", "key_union_vs_q",
        "t3_drops", "selector_agreement", "router_training", "router_coefficients",
        "zero_shot_hits", "alpha_sweep", "leave_one_feature_out", "specification_curve",
        "regime_arms", "sweep", "knockout_bars", "routing_latency", "alpha_transfer",
    }  # fmt: skip
    assert _figure_functions() == covered
    for fig in made:
        fig.close()


def test_each_caption_names_only_what_its_figure_draws(t2: tuple[Any, pd.DataFrame, Any]) -> None:
    problems = {}
    for fig in _every_figure(t2):
        if caption_problems(fig):
            problems[fig.name] = caption_problems(fig)
        fig.close()
    assert problems == {}


def test_caption_check_catches_a_colour_the_figure_does_not_draw() -> None:
    fig = figures.regime_shares(_shares())
    assert caption_problems(fig) == []
    wrong = figures.Figure(fig.figure, fig.name, fig.caption + " Red markers are above zero.",
                           alt=fig.alt)  # fmt: skip
    assert caption_problems(wrong) == [
        "the caption names 'vermilion', which the figure does not draw"
    ]
    assert caption_problems(figures.Figure(fig.figure, "x", fig.caption, alt="x.svg"))
    fig.close()


_FORMULA_OR_CODE = re.compile(r"[¬∧∨]|\b[a-z0-9]+_[a-z0-9_]+\b")


def test_labels_are_words_and_text_is_legible_on_a_phone(
    t2: tuple[Any, pd.DataFrame, Any], tmp_path
) -> None:
    from regime_core.book.figures import encodings

    for fig in _every_figure(t2):
        texts = [ax.get_title(loc) for ax in fig.figure.axes for loc in ("left", "center")]
        texts += [t.get_text() for ax in fig.figure.axes for t in ax.get_yticklabels()]
        texts += [t.get_text() for ax in fig.figure.axes for t in ax.get_xticklabels()]
        offending = [t for t in texts if _FORMULA_OR_CODE.search(t)]
        assert offending == [], f"{fig.name}: {offending}"
        carried = encodings.figure_text(fig.save(tmp_path))  # its smallest text, its width
        assert float(carried[encodings.SMALLEST_TEXT_KEY]) >= figures.SMALLEST_TEXT, fig.name
        assert fig.figure.get_figwidth() <= figures.WIDTH + 1e-9, fig.name
        # nothing sticks out of the figure (a wider SVG is shrunk more on a phone)
        width = float(carried[encodings.WIDTH_PT_KEY])
        assert width <= figures.WIDTH * 72 + 12, f"{fig.name}: {width} pt wide"
        fig.close()


def test_the_r2_axis_frames_the_fits_and_the_threshold() -> None:
    fig = figures.t1_r2(_t1_result())
    low, high = fig.figure.axes[0].get_xlim()
    assert 0.6 < low < 0.78 and high == 1.0  # points 0.78-0.98, threshold 0.90
    assert "arrow" in fig.caption  # the CI reaching 0.48 is cut at the edge
    assert figures.claims.r2_axis_floor([0.2, 0.95], 0.9) == 0.16
    fig.close()


def test_specification_curves_draw_differences_in_points() -> None:
    rows = _many_readings(12)
    fig = figures.specification_curve(
        rows, {"pool": ["question", "corpus"]}, title="T2", estimate_label="Δ (pp)", percent=True
    )
    drawn = np.concatenate([c.get_offsets()[:, 1] for c in fig.figure.axes[0].collections
                            if len(c.get_offsets())])  # fmt: skip
    assert np.nanmax(np.abs(drawn)) > 1  # 0.05 as a fraction is 5 points
    fig.close()


def test_the_latency_figure_draws_every_timing_on_a_log_axis_with_the_bound() -> None:
    from regime_core.router.latency import median_of_passes

    result = _latency()
    fig = figures.routing_latency(result)
    ax = fig.figure.axes[0]
    assert ax.get_xscale() == "log"
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["Python, warm", "Python, cold", "JavaScript, warm", "JavaScript, cold"]
    dots = [c.get_offsets()[:, 0] for c in ax.collections]
    assert [len(d) for d in dots] == [60, 6, 60, 6]  # warm: one per question; cold: per process
    assert np.allclose(np.sort(dots[0]), np.sort(median_of_passes(result.python_warm)))
    bound = [ln for ln in ax.get_lines() if ln.get_linestyle() == "--"]
    assert len(bound) == 1 and bound[0].get_xdata()[0] == pytest.approx(1e-3)  # the claim's
    assert "1 ms" in fig.caption and "1 ms" in fig.alt
    assert figures.router._duration_label(1e-5) == "10 µs"
    fig.close()
    python_only = figures.routing_latency(_latency(javascript=False), bound=2e-3)
    assert len(python_only.figure.axes[0].get_yticklabels()) == 2
    assert "2 ms" in python_only.caption and "JavaScript" not in python_only.caption
    assert caption_problems(python_only) == []
    python_only.close()


def test_an_image_without_data_draws_no_colour() -> None:
    """An image whose data was never set draws nothing; its colormap's colour for "no value"
    (viridis' darkest, #440154) was once listed as drawn."""
    import matplotlib.pyplot as plt
    from matplotlib.image import AxesImage

    from regime_core.book.figures import encodings

    named = {"#440154": "purple", "#1f77b4": "blue"}
    fig, ax = plt.subplots()
    ax.add_image(AxesImage(ax, cmap="viridis"))
    ax.plot([0, 1], [0, 1], color="#1f77b4")
    assert encodings.figure_encodings(fig, named) == {"blue"}
    ax.images[0].set_data(np.zeros((2, 2)))  # with data, its colour is drawn and named
    assert encodings.figure_encodings(fig, named) == {"blue", "purple"}
    plt.close(fig)


def test_the_svg_carries_alt_text_caption_encodings_and_smallest_text(tmp_path) -> None:
    from regime_core.book.figures import encodings

    fig = figures.regime_shares(_shares())
    fig.alt = 'Bars of "shares" <by regime> & type'  # escaped in the file, read back whole
    text = encodings.figure_text(fig.save(tmp_path))
    assert text[encodings.ALT_KEY] == fig.alt and text[encodings.CAPTION_KEY] == fig.caption
    assert set(text[encodings.ENCODINGS_KEY].split(",")) >= {"blue", "green", "grey"}
    assert float(text[encodings.SMALLEST_TEXT_KEY]) == pytest.approx(figures.SMALLEST_TEXT)
    assert float(text[encodings.WIDTH_PT_KEY]) == pytest.approx(_root_width_pt(fig.svg()))
    fig.close()
    (tmp_path / "other.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>")
    (tmp_path / "broken.svg").write_text("<svg")
    assert encodings.figure_text(tmp_path / "other.svg") == {}  # not a book figure
    assert encodings.figure_text(tmp_path / "broken.svg") == {}
    assert encodings.figure_text(tmp_path / "regime_shares.png") == {}


def _root_width_pt(svg: bytes) -> float:
    found = re.search(rb'<svg [^>]*width="([0-9.]+)pt"', svg)
    assert found is not None
    return float(found.group(1))


def test_no_plotting_code_outside_the_figures_module() -> None:
    offenders = []
    # the package and the book's Sphinx extension beside the pages (book/_ext)
    sources = [*(paths.REPO_ROOT / "regime_core").rglob("*.py")]
    sources += (paths.REPO_ROOT / "book" / "_ext").rglob("*.py")
    for path in sources:
        if path.parent.name == "figures" and path.parent.parent.name == "book":
            continue
        text = path.read_text(encoding="utf-8")
        # code, not prose: the book checker's docstrings name plt.show() as what it looks for
        if re.search(r"import matplotlib|from matplotlib|^\s*plt\.|import seaborn", text, re.M):
            offenders.append(str(path.relative_to(paths.REPO_ROOT)))
    for path in (paths.REPO_ROOT / "notebooks").glob("*.ipynb"):
        if re.search(r"matplotlib|\bplt\.", path.read_text(encoding="utf-8")):
            offenders.append(str(path.relative_to(paths.REPO_ROOT)))
    assert offenders == []


def _transfer_numbers() -> dict[str, Any]:
    """A constructed alpha_transfer record's numbers: two encoders, two datasets."""
    grid = [round(0.05 * i, 2) for i in range(41)]

    def cell(best: float, ratio: float) -> dict[str, Any]:
        curve = {f"{a:.2f}".replace(".", "p"): 0.6 + 0.2 * (1 - abs(a - best) / 2) for a in grid}
        rules = {"fixed": 0.25, "calibrated": 1.1 * ratio, "calibrated_question": 0.7,
                 "tuned_fixed": 0.95}  # fmt: skip
        return {
            "curve": curve,
            "best": {"in_sample": best, "in_sample_hit": 0.8},
            "rules": {name: {"alpha": a, "hit": 0.7} for name, a in rules.items()},
            "spreads": {"all": {"all": {"n": 10, "median_ratio": ratio}}},
        }

    return {
        "fit": {"c": 1.1},
        "pairs": {
            e: {"2wikimultihopqa": cell(1.0, 0.9), "musique": cell(0.85, 1.0)}
            for e in ("minilm", "tfidf")
        },
    }


def test_alpha_transfer_figure() -> None:
    fig = figures.alpha_transfer(_transfer_numbers())
    # two rows of two curve panels and the ratio panel
    assert len(fig.figure.axes) == 6
    assert "c = 1.10" in fig.caption and "vermilion dashed" in fig.caption
    assert caption_problems(fig) == []
    rings = [
        tuple(line.get_xdata())
        for ax in fig.figure.axes
        for line in ax.get_lines()
        if line.get_markerfacecolor() == "none"
    ]
    assert rings == [(1.0,), (0.85,)] * 2  # the best grid α of each panel, ringed
    ratio_points = [
        (tuple(line.get_xdata()), tuple(line.get_ydata()))
        for line in fig.figure.axes[2].get_lines()
        if line.get_linestyle() == "None"
    ]
    assert ratio_points == [((0.9,), (1.0,)), ((1.0,), (0.85,))]
    _check(fig, "alpha_transfer")


def test_interval_coverage_figure() -> None:
    from regime_core import coverage

    grid = coverage.coverage_grid([50, 200], [0.01, 0.05], [0.0, 0.5, 1.0])
    fig = figures.interval_coverage(grid)
    assert caption_problems(fig) == []
    # the axis starts below the lowest coverage drawn, far down when the first interval is drawn
    lowest = grid[grid["method"].isin(["score_cc", "score"])]["coverage"].min()
    assert all(ax.get_ylim()[0] <= lowest for ax in fig.figure.axes if ax.get_visible())
    shown = [ax for ax in fig.figure.axes if ax.get_visible()]
    assert len(shown) == 4 and "mean" in shown[-1].get_title() and "mean coverage" in fig.caption
    first = figures.interval_coverage(grid, methods=("conditional_exact", "score"))
    first_lowest = grid[grid["method"] == "conditional_exact"]["coverage"].min()
    assert all(ax.get_ylim()[0] <= first_lowest < 0.5 for ax in first.figure.axes[:3])
    first.close()
    _check(fig, "interval_coverage")
