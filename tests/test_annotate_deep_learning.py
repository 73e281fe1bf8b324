"""Deep-learning code: the library table (annotate/call_rules.py) and the roles it assigns.

The reproduction of issue 20 (finding 2) first: a 20-line PyTorch loop whose loss accumulation
was read as seed/fold averaging and whose ``random_split`` was not a holdout. Then one small
script per role, and the table itself (every row names a known role and a codebook value; a new
library is a new row).
"""

from __future__ import annotations

import dataclasses
import textwrap

import pytest

from automd_analysis.annotate import call_rules as cr
from automd_analysis.annotate.code import annotate_sources
from automd_analysis.annotate.practices import TaskFacts
from automd_analysis.codebook import CODEBOOK

CLS = TaskFacts(kind="classification", ehr=True, external_shift=False)

LOOP = """
import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset, random_split

df = pd.read_csv("train.csv")
X = torch.tensor(df.drop(columns=["death_30d"]).values, dtype=torch.float32)
y = torch.tensor(df["death_30d"].values, dtype=torch.float32)
ds = TensorDataset(X, y)
n_val = int(0.2 * len(ds))
train_ds, val_ds = random_split(ds, [len(ds) - n_val, n_val])
model = nn.Sequential(nn.Linear(X.shape[1], 64), nn.ReLU(), nn.Linear(64, 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.BCEWithLogitsLoss()
for epoch in range(10):
    running_loss = 0.0
    for xb, yb in DataLoader(train_ds, batch_size=64, shuffle=True):
        opt.zero_grad()
        loss = criterion(model(xb).squeeze(1), yb)
        loss.backward()
        opt.step()
        running_loss += loss.item()
    print(epoch, running_loss)
te = pd.read_csv("test_features.csv")
p = torch.sigmoid(model(torch.tensor(te.values, dtype=torch.float32))).detach().numpy().ravel()
"""


def _answers(code: str, task: TaskFacts = CLS) -> dict:
    found, trace = annotate_sources([("train.py", textwrap.dedent(code))], task)
    assert not trace.notes
    return {name: f.value for name, f in found.items()}


def _line(code: str, text: str) -> int:
    """The 1-based line of ``code`` that contains ``text``."""
    return next(i for i, line in enumerate(code.splitlines(), 1) if text in line)


def _evidence(code: str, field: str, task: TaskFacts = CLS) -> list[int]:
    found, _ = annotate_sources([("train.py", textwrap.dedent(code))], task)
    return [line for _, line in found[field].evidence]


@pytest.mark.parametrize(
    "write",
    [
        'pd.DataFrame({"PredictedProbability": p}).to_csv("submission.csv")',
        # AI-Scientist-v2 nodes save their results, losses included, and no submission file
        'np.save("experiment_data.npy", {"losses": [running_loss], "preds": p})',
        "print(p.mean(), running_loss)",  # nothing written: every construct reached counts
    ],
)
def test_issue_reproduction_loss_accumulation_and_random_split(write):
    got = _answers(LOOP + write + "\n")
    assert got["ensembling"] == ("single_model",)
    assert got["validation_design"] == ("single_holdout",)
    assert got["model_families"] == ("neural_net",)
    assert _evidence(LOOP + write + "\n", "validation_design") == [_line(LOOP, "random_split(ds")]


SEEDS = """
import numpy as np
import pandas as pd
import torch
from torch import nn
from sklearn.model_selection import train_test_split

d = pd.read_csv("train.csv")
X = torch.tensor(d[["a", "b"]].values, dtype=torch.float32)
y = torch.tensor(d["y"].values, dtype=torch.float32)
tr, va = train_test_split(np.arange(len(y)), test_size=0.2)
Xt = torch.tensor(pd.read_csv("test.csv")[["a", "b"]].values, dtype=torch.float32)
total = np.zeros(len(Xt))
for seed in [0, 1, 2]:
    torch.manual_seed(seed)
    net = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
    opt = torch.optim.Adam(net.parameters())
    for epoch in range(20):
        epoch_loss = 0.0
        for i in range(0, len(tr), 32):
            b = tr[i : i + 32]
            loss = nn.functional.binary_cross_entropy_with_logits(net(X[b]).squeeze(1), y[b])
            opt.zero_grad()
            loss.backward()
            opt.step()
            epoch_loss += float(loss)
    total += torch.sigmoid(net(Xt).squeeze(1)).detach().numpy()
pd.DataFrame({"p": total / 3}).to_csv("submission.csv")
"""


def test_seed_averaging_is_ensembling_but_loss_and_batches_are_not():
    got = _answers(SEEDS)
    assert got["ensembling"] == ("seed_fold_average",)
    assert _evidence(SEEDS, "ensembling") == [_line(SEEDS, "total += ")]


def test_batch_predictions_collected_and_concatenated_are_one_model():
    code = SEEDS.replace(
        "    total += torch.sigmoid(net(Xt).squeeze(1)).detach().numpy()\n",
        "",
    ).replace(
        'pd.DataFrame({"p": total / 3})',
        "parts = []\n"
        "for i in range(0, len(Xt), 256):\n"
        "    parts.append(torch.sigmoid(net(Xt[i : i + 256])).detach().numpy())\n"
        'pd.DataFrame({"p": np.concatenate(parts)})',
    )
    assert _answers(code)["ensembling"] == ("single_model",)


@pytest.mark.parametrize(
    ("split", "design"),
    [
        (
            "perm = np.random.default_rng(0).permutation(n)\nfit_idx, val_idx = perm[n // 5 :], perm[: n // 5]",
            "single_holdout",
        ),
        (
            "cut = int(0.8 * n)\nfit_idx, val_idx = np.arange(n)[:cut], np.arange(n)[cut:]",
            "single_holdout",
        ),
        # cutting train and test apart again after a joint encoding is not a split
        ("fit_idx = np.arange(n)[: len(d)]", "none"),
        ("fit_idx = np.arange(n)", "none"),
    ],
)
def test_hand_made_index_splits(split, design):
    code = f"""
    import numpy as np
    import pandas as pd
    import torch
    from torch import nn
    d = pd.read_csv("train.csv")
    X = torch.tensor(d[["a"]].values, dtype=torch.float32)
    y = torch.tensor(d["y"].values, dtype=torch.float32)
    n = len(y)
    {textwrap.indent(split, "    ").strip()}
    net = nn.Linear(1, 1)
    net = nn.Sequential(net)
    loss = nn.BCEWithLogitsLoss()(net(X[fit_idx]).squeeze(1), y[fit_idx])
    loss.backward()
    pd.DataFrame({{"p": net(X).detach().numpy().ravel()}}).to_csv("submission.csv")
    """
    assert _answers(code)["validation_design"] == (design,)


KERAS = """
import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedKFold
from tensorflow import keras

d = pd.read_csv("train.csv")
X, y = d[["a", "b"]].values, d["y"].values
Xt = pd.read_csv("test.csv")[["a", "b"]].values
model = keras.Sequential([keras.layers.Dense(8), keras.layers.Dense(1, activation="sigmoid")])
model.compile(loss="binary_crossentropy")
{fit}
pd.DataFrame({{"p": model.predict(Xt).ravel()}}).to_csv("submission.csv")
"""


@pytest.mark.parametrize(
    ("fit", "design", "imbalance"),
    [
        ("model.fit(X, y, validation_split=0.2)", ("single_holdout",), "none"),
        ("model.fit(X, y, validation_split=0.0)", ("none",), "none"),
        (
            "model.fit(X[:800], y[:800], validation_data=(X[800:], y[800:]))",
            ("single_holdout",),
            "none",
        ),
        ("model.fit(X, y, class_weight={0: 1.0, 1: 4.0})", ("none",), "class_weight"),
        ("model.fit(X, y, class_weight=None)", ("none",), "none"),
        (
            "for tr, va in StratifiedKFold(5).split(X, y):\n"
            "    model.fit(X[tr], y[tr], validation_data=(X[va], y[va]))",
            ("kfold_cv",),
            "none",
        ),
    ],
)
def test_keras_validation_and_class_weight_arguments(fit, design, imbalance):
    got = _answers(KERAS.format(fit=fit))
    assert got["validation_design"] == design
    assert got["class_imbalance_handling"] == imbalance


TORCH_HEAD = """
import numpy as np
import pandas as pd
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, WeightedRandomSampler, random_split

d = pd.read_csv("train.csv")
X = torch.tensor(d[["a", "b"]].values, dtype=torch.float32)
y = torch.tensor(d["y"].values, dtype=torch.float32)
ds = TensorDataset(X, y)
tr, va = random_split(ds, [0.8, 0.2])
net = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
"""
TORCH_TAIL = """
for xb, yb in loader:
    loss = crit(net(xb).squeeze(1), yb)
    loss.backward()
vx = torch.stack([ds[i][0] for i in va.indices])
logits = net(vx).squeeze(1).detach()
test_logits = net(torch.tensor(pd.read_csv("test.csv")[["a", "b"]].values)).squeeze(1).detach()
{calibrate}
pd.DataFrame({{"p": out.numpy()}}).to_csv("submission.csv")
"""


@pytest.mark.parametrize(
    ("setup", "imbalance"),
    [
        (
            "crit = nn.BCEWithLogitsLoss(pos_weight=torch.tensor(4.0))\nloader = DataLoader(tr)",
            "class_weight",
        ),
        ("crit = nn.BCEWithLogitsLoss(pos_weight=None)\nloader = DataLoader(tr)", "none"),
        (
            "crit = nn.CrossEntropyLoss(torch.tensor([1.0, 3.0]))\nloader = DataLoader(tr)",
            "class_weight",
        ),
        (
            "crit = nn.BCEWithLogitsLoss()\n"
            "w = torch.ones(len(tr))\n"
            "loader = DataLoader(tr, sampler=WeightedRandomSampler(w, len(w)))",
            "oversampling",
        ),
    ],
)
@pytest.mark.parametrize(
    ("calibrate", "calibrated"),
    [
        ("out = torch.sigmoid(test_logits)", "no"),
        ("temperature = logits.std()\nout = torch.sigmoid(test_logits / temperature)", "yes"),
    ],
)
def test_torch_class_weights_samplers_and_temperature_scaling(
    setup, imbalance, calibrate, calibrated
):
    code = TORCH_HEAD + setup + TORCH_TAIL.format(calibrate=calibrate)
    got = _answers(code)
    assert got["class_imbalance_handling"] == imbalance
    assert got["probability_calibration"] == calibrated
    assert got["validation_design"] == ("single_holdout",)
    if imbalance != "none":
        assert got["recalibration_after_imbalance"] == calibrated


def test_lightning_trainer_fits_predicts_and_validates():
    code = """
    import pandas as pd
    import pytorch_lightning as pl
    import torch
    from torch import nn
    from torch.utils.data import DataLoader

    class Net(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(2, 1))
            self.loss = nn.BCEWithLogitsLoss(pos_weight=torch.tensor(3.0))

        def forward(self, x):
            return self.body(x)

        def training_step(self, batch, i):
            x, y = batch
            return self.loss(self(x), y)

    d = pd.read_csv("train.csv")
    train_dl, val_dl, test_dl = DataLoader(d[:100]), DataLoader(d[100:]), DataLoader(d)
    model = Net()
    trainer = pl.Trainer(max_epochs=3)
    trainer.fit(model, train_dl, {val})
    p = torch.cat(trainer.predict(model, dataloaders=test_dl))
    pd.DataFrame({{"p": p.numpy()}}).to_csv("submission.csv")
    """
    with_val = _answers(code.format(val="val_dl"))
    assert with_val["model_families"] == ("neural_net",)
    assert with_val["ensembling"] == ("single_model",)
    assert with_val["class_imbalance_handling"] == "class_weight"
    assert with_val["validation_design"] == ("single_holdout",)
    assert _answers(code.format(val="None"))["validation_design"] == ("none",)


def test_huggingface_trainer_subclass_with_a_weighted_loss():
    code = """
    import pandas as pd
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, Trainer

    class Weighted(Trainer):
        def compute_loss(self, model, inputs, return_outputs=False):
            out = model(**inputs)
            return torch.nn.CrossEntropyLoss(weight=torch.tensor([1.0, 5.0]))(out.logits, inputs["labels"])

    tok = AutoTokenizer.from_pretrained("bert")
    model = AutoModelForSequenceClassification.from_pretrained("bert", num_labels=2)
    trainer = Weighted(model=model, train_dataset=tok("a"), eval_dataset={eval})
    trainer.train()
    logits = trainer.predict(tok("b")).predictions
    pd.DataFrame({{"p": torch.softmax(torch.tensor(logits), 1)[:, 1]}}).to_csv("submission.csv")
    """
    got = _answers(code.format(eval='tok("c")'))
    assert got["model_families"] == ("neural_net",)
    assert got["class_imbalance_handling"] == "class_weight"
    assert got["validation_design"] == ("single_holdout",)
    assert _answers(code.format(eval="None"))["validation_design"] == ("none",)


def test_skorch_keywords():
    code = """
    import pandas as pd
    import torch
    from skorch import NeuralNetBinaryClassifier
    d = pd.read_csv("train.csv")
    net = NeuralNetBinaryClassifier(torch.nn.Linear, module__in_features=2, {kw})
    net.fit(d[["a", "b"]].values, d["y"].values)
    pd.DataFrame({{"p": net.predict_proba(d[["a", "b"]].values)[:, 1]}}).to_csv("submission.csv")
    """
    weighted = _answers(code.format(kw="criterion__pos_weight=torch.tensor(2.0), train_split=None"))
    assert weighted["class_imbalance_handling"] == "class_weight"
    assert weighted["validation_design"] == ("none",)
    plain = _answers(code.format(kw="train_split=skorch.dataset.ValidSplit(5)"))
    assert plain["class_imbalance_handling"] == "none"
    assert plain["validation_design"] == ("single_holdout",)


# ------------------------------------------------------------------------------------- the table

_ROLE_FIELD = {
    "model": "model_families",
    "split": "validation_design",
    "validation": "validation_design",
    "imbalance": "class_imbalance_handling",
}


@pytest.mark.parametrize("rule", cr.CALL_RULES, ids=lambda r: f"{r.at}:{r.call}:{r.role}")
def test_every_row_names_a_known_role_and_a_codebook_value(rule):
    assert rule.role in {
        "model",
        "loss",
        "loss_fn",
        "split",
        "validation",
        "imbalance",
        "calibrator",
        "batches",
        "train_on",
    }
    assert rule.at in {"call", "model", "fit", "method"}
    if rule.role in _ROLE_FIELD:
        assert rule.value in CODEBOOK[_ROLE_FIELD[rule.role]].values
    if rule.at in ("model", "fit"):
        assert rule.evidence.arg is not None  # a keyword row names its keyword
    if rule.at == "call":
        assert "." in rule.call


def test_a_new_library_is_a_table_row(monkeypatch):
    code = """
    import pandas as pd
    import torch
    import holdoutlib
    d = pd.read_csv("train.csv")
    fit_rows, val_rows = holdoutlib.carve(d, share=0.2)
    net = torch.nn.Sequential(torch.nn.Linear(2, 1))
    criterion = holdoutlib.WeightedLoss(weights=[1, 4])
    criterion(net(fit_rows), fit_rows["y"]).backward()
    pd.DataFrame({"p": net(d).detach().numpy().ravel()}).to_csv("submission.csv")
    """
    before = _answers(code)
    assert before["validation_design"] == ("none",)
    assert before["class_imbalance_handling"] == "none"
    rows = (
        cr.CallRule("holdoutlib.carve", "split", "single_holdout"),
        cr.CallRule("holdoutlib.WeightedLoss", "loss"),
        cr.CallRule(
            "holdoutlib.WeightedLoss", "imbalance", "class_weight", cr.Evidence(cr.Arg("weights"))
        ),
    )
    monkeypatch.setattr(cr, "CALL_RULES", cr.CALL_RULES + rows)
    cr.call_rules.cache_clear()
    try:
        after = _answers(code)
    finally:
        monkeypatch.undo()
        cr.call_rules.cache_clear()
    assert after["validation_design"] == ("single_holdout",)
    assert after["class_imbalance_handling"] == "class_weight"
    assert _answers(code) == before


def test_qualified_names_match_on_root_and_last_parts():
    assert [r.role for r in cr.call_rules("torch.nn.modules.loss.BCEWithLogitsLoss")] == [
        "loss",
        "imbalance",
        "imbalance",
    ]
    assert cr.call_rules("transformers.AutoTokenizer.from_pretrained") == ()
    assert cr.call_rules("keras.applications.resnet50.preprocess_input") == ()
    assert [r.value for r in cr.call_rules("keras.applications.ResNet50")] == ["neural_net"]
    assert cr.trainer_rule("lightning.pytorch.trainer.trainer.Trainer") is not None
    assert cr.hooks_of("pytorch_lightning.core.module.LightningModule")
    assert dataclasses.is_dataclass(cr.CALL_RULES[0])
