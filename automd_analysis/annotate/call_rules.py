"""Library calls and what they mean for the codebook, as a table (pure data, no imports of them).

Every row of :data:`CALL_RULES` says: this call (or keyword of a model's constructor or ``fit``,
or method of any object) plays this *role*, with this codebook value, when this *evidence* holds.
The interpreter gives each role one meaning for every library (``docs/annotation.md``), so adding a
library is adding rows:

``model``
    Constructs a model of the family ``value`` (its predictions can reach the submission).
``loss``
    Constructs a loss; calling it compares predictions with targets. A loss is not a prediction
    (accumulating it is not ensembling); back-propagating it trains the models whose predictions
    it compares, on the rows it compares them with.
``loss_fn``
    Computes a loss directly (functional form).
``split``
    Splits the rows for validation: design ``value``.
``validation``
    The call is validated on held-out data: design ``value`` (evidence: the argument that holds it).
``imbalance``
    Re-weights or resamples the classes: codebook ``value`` of ``class_imbalance_handling``.
``calibrator``
    A post-hoc calibrator fitted on predictions (method ``value``).
``batches``
    Yields mini-batches of one data set: a loop over it is not a fold or seed loop.
``train_on``
    Back-propagates the loss given at ``evidence.arg`` (or the receiver): trains on it.

A row's ``at`` says where it applies: ``call`` (the library call named by ``call``, matched on
its root package and the last parts of its qualified name, ``*`` globbing within a part),
``model`` (a keyword of any model's constructor), ``fit`` (a keyword of any model's ``fit``) or
``method`` (a method called ``call`` on any object). :data:`TRAINERS` lists the training loops that
own a model (PyTorch Lightning, HuggingFace ``Trainer``), :data:`FRAMEWORK_HOOKS` the methods a
framework calls on the user's subclasses.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from functools import lru_cache

__all__ = [
    "CALL_RULES",
    "FRAMEWORK_HOOKS",
    "SAMPLE_WEIGHT_KEYWORDS",
    "SCALAR_METHODS",
    "TRAINERS",
    "Arg",
    "CallRule",
    "Evidence",
    "TrainerRule",
    "call_rules",
    "method_rules",
    "hooks_of",
    "rules_at",
    "trainer_rule",
]


@dataclass(frozen=True)
class Arg:
    """Where a call takes an argument: a keyword name and, if it may be positional, a position."""

    keyword: str
    position: int | None = None


@dataclass(frozen=True)
class Evidence:
    """When a row's practice holds.

    Attributes
    ----------
    arg : Arg or None
        ``None``: the call itself is the evidence. Else the argument must be given, and...
    off : tuple
        ...not be one of these literals (values that switch the practice off); a value that is
        not a literal counts as given.
    between : (float, float) or None
        ...be a literal strictly between these bounds (``validation_split=0.2``).
    unless_split : str or None
        ...not carry rows of a split of this design (``validation_data=`` of a CV fold is that
        fold, not a holdout).
    from_classes : bool
        ...be derived from the class labels (class frequencies, a 0/1 mapping).
    """

    arg: Arg | None = None
    off: tuple = (None, False)
    between: tuple[float, float] | None = None
    unless_split: str | None = None
    from_classes: bool = False


ALWAYS = Evidence()


@dataclass(frozen=True)
class CallRule:
    """One row: ``call`` plays ``role`` (codebook ``value``) when ``evidence`` holds; see the
    module docstring for ``at`` and the roles."""

    call: str
    role: str
    value: str | None = None
    evidence: Evidence = ALWAYS
    at: str = "call"


def _given(keyword: str, position: int | None = None, **kw) -> Evidence:
    return Evidence(Arg(keyword, position), **kw)


def _rows(calls: str, role: str, value: str | None = None, evidence: Evidence = ALWAYS, at="call"):
    return tuple(CallRule(c, role, value, evidence, at) for c in calls.split())


_TORCH_LOSSES = (
    "torch.nn.BCEWithLogitsLoss torch.nn.BCELoss torch.nn.CrossEntropyLoss torch.nn.NLLLoss "
    "torch.nn.MSELoss torch.nn.L1Loss torch.nn.SmoothL1Loss torch.nn.HuberLoss "
    "torch.nn.MultiLabelSoftMarginLoss torch.nn.SoftMarginLoss torch.nn.KLDivLoss "
    "torch.nn.PoissonNLLLoss torch.nn.GaussianNLLLoss"
)
_TORCH_LOSS_FUNCTIONS = (
    "torch.nn.functional.binary_cross_entropy_with_logits torch.nn.functional.binary_cross_entropy "
    "torch.nn.functional.cross_entropy torch.nn.functional.nll_loss torch.nn.functional.mse_loss "
    "torch.nn.functional.l1_loss torch.nn.functional.smooth_l1_loss torch.nn.functional.huber_loss "
    "torch.nn.functional.kl_div torch.nn.functional.poisson_nll_loss"
)


def _keras_losses(*names: str) -> str:
    """``keras.losses.NAME`` then ``tensorflow.losses.NAME`` for each name, space-separated."""
    return " ".join(f"{root}.losses.{name}" for root in ("keras", "tensorflow") for name in names)


_KERAS_LOSSES = _keras_losses(
    "BinaryCrossentropy",
    "CategoricalCrossentropy",
    "SparseCategoricalCrossentropy",
    "BinaryFocalCrossentropy",
    "MeanSquaredError",
)
_KERAS_LOSS_FUNCTIONS = _keras_losses(
    "binary_crossentropy", "categorical_crossentropy", "sparse_categorical_crossentropy"
)
_NEURAL_MODELS = (
    "timm.create_model torchvision.models.* torchvision.ops.MLP "
    "transformers.AutoModel.from_pretrained transformers.*For*.from_pretrained "
    "transformers.*ForSequenceClassification transformers.*ForTokenClassification "
    "skorch.NeuralNet skorch.NeuralNetClassifier skorch.NeuralNetBinaryClassifier "
    "skorch.NeuralNetRegressor keras.applications.[A-Z]* tensorflow.keras.applications.[A-Z]* "
    "pytorch_tabnet.TabNetClassifier pytorch_tabnet.TabNetRegressor"
)

#: Keywords of ``fit`` that weight the rows (not training data themselves).
SAMPLE_WEIGHT_KEYWORDS = ("sample_weight", "sample_weights", "weight", "weights", "weights_col")

#: The table: call -> role, codebook value, evidence.
CALL_RULES: tuple[CallRule, ...] = (
    # models of the deep-learning libraries (scikit-learn-style estimators: library.MODEL_FAMILIES)
    *_rows(_NEURAL_MODELS, "model", "neural_net"),
    # losses: comparisons of predictions with targets, and the class weights they carry
    *_rows(_TORCH_LOSSES, "loss"),
    *_rows(_TORCH_LOSS_FUNCTIONS, "loss_fn"),
    *_rows(_KERAS_LOSSES, "loss"),
    *_rows(_KERAS_LOSS_FUNCTIONS + " tensorflow.nn.weighted_cross_entropy_with_logits", "loss_fn"),
    *_rows("timm.loss.BinaryCrossEntropy timm.loss.LabelSmoothingCrossEntropy", "loss"),
    *_rows(
        "torch.nn.CrossEntropyLoss torch.nn.NLLLoss",
        "imbalance",
        "class_weight",
        _given("weight", 0),
    ),
    *_rows(
        "torch.nn.BCEWithLogitsLoss timm.loss.BinaryCrossEntropy",
        "imbalance",
        "class_weight",
        _given("pos_weight"),
    ),
    *_rows(
        "torch.nn.BCEWithLogitsLoss torch.nn.BCELoss",
        "imbalance",
        "class_weight",
        _given("weight", 0),
    ),
    *_rows(
        "torch.nn.functional.cross_entropy torch.nn.functional.nll_loss",
        "imbalance",
        "class_weight",
        _given("weight", 2),
    ),
    CallRule(
        "torch.nn.functional.binary_cross_entropy_with_logits",
        "imbalance",
        "class_weight",
        _given("pos_weight"),
    ),
    CallRule(
        "tensorflow.nn.weighted_cross_entropy_with_logits",
        "imbalance",
        "class_weight",
        _given("pos_weight", 2),
    ),
    *_rows(
        "keras.losses.BinaryFocalCrossentropy tensorflow.keras.losses.BinaryFocalCrossentropy",
        "imbalance",
        "class_weight",
        _given("apply_class_balancing"),
    ),
    # splits of the rows
    *_rows(
        "torch.utils.data.random_split keras.utils.split_dataset tensorflow.keras.utils.split_dataset",
        "split",
        "single_holdout",
    ),
    CallRule("train_test_split", "split", "single_holdout", at="method"),  # datasets.Dataset
    # validation data handed to a training call
    CallRule("", "validation", "single_holdout", _given("validation_split", between=(0, 1)), "fit"),
    CallRule(
        "",
        "validation",
        "single_holdout",
        _given("validation_data", unless_split="kfold_cv"),
        "fit",
    ),
    CallRule("", "validation", "single_holdout", _given("train_split"), "model"),  # skorch
    # class re-weighting by keyword (constructors and fit), and samplers
    *(
        CallRule("", "imbalance", "class_weight", _given(k, off=off), "model")
        for k, off in (
            ("class_weight", (None,)),
            ("class_weights", (None,)),
            ("scale_pos_weight", (None, 1, 1.0)),
            ("is_unbalance", (None, False)),
            ("auto_class_weights", (None, "None")),
            ("pos_weight", (None,)),
            ("criterion__weight", (None,)),
            ("criterion__pos_weight", (None,)),
        )
    ),
    CallRule("", "imbalance", "class_weight", _given("class_weight", off=(None,)), "fit"),
    *(
        CallRule("", "imbalance", "class_weight", _given(k, from_classes=True), "fit")
        for k in SAMPLE_WEIGHT_KEYWORDS
    ),
    *_rows(
        "torch.utils.data.WeightedRandomSampler torchsampler.ImbalancedDatasetSampler",
        "imbalance",
        "oversampling",
    ),
    *_rows(
        "imblearn.keras.BalancedBatchGenerator imblearn.keras.balanced_batch_generator "
        "imblearn.tensorflow.balanced_batch_generator",
        "imbalance",
        "undersampling",
    ),
    # post-hoc calibrators of the deep-learning libraries (scikit-learn's: library.CALIBRATORS)
    CallRule("netcal.scaling.TemperatureScaling", "calibrator", "temperature"),
    # mini-batches
    CallRule("torch.utils.data.DataLoader", "batches"),
    *_rows("batch padded_batch", "batches", at="method"),  # tf.data.Dataset
    # back-propagation
    *_rows("backward", "train_on", at="method"),  # loss.backward(), accelerator.backward(loss)
    CallRule("gradient", "train_on", evidence=_given("target", 0), at="method"),  # GradientTape
)


@dataclass(frozen=True)
class TrainerRule:
    """A training loop object that owns the model it trains.

    Attributes
    ----------
    call : str
        The trainer class.
    model : Arg or None
        Where the constructor takes the model (HuggingFace ``Trainer(model=...)``).
    train, validation : tuple of Arg
        Training and validation data given to the constructor.
    fit : str
        The method that trains.
    fit_model : Arg or None
        Where ``fit`` takes the model (Lightning ``trainer.fit(model, ...)``).
    fit_train, fit_validation : tuple of Arg
        Training and validation data given to ``fit``.
    predict : tuple of str
        Methods that return predictions.
    predict_model : Arg or None
        Where those methods take the model.
    """

    call: str
    model: Arg | None = None
    train: tuple[Arg, ...] = ()
    validation: tuple[Arg, ...] = ()
    fit: str = "fit"
    fit_model: Arg | None = None
    fit_train: tuple[Arg, ...] = ()
    fit_validation: tuple[Arg, ...] = ()
    predict: tuple[str, ...] = ("predict",)
    predict_model: Arg | None = None


_LIGHTNING = dict(
    fit_model=Arg("model", 0),
    fit_train=(Arg("train_dataloaders", 1),),
    fit_validation=(Arg("val_dataloaders", 2),),
    predict=("predict",),
    predict_model=Arg("model", 0),
)

#: Trainers of the deep-learning libraries.
TRAINERS: tuple[TrainerRule, ...] = (
    TrainerRule("pytorch_lightning.Trainer", **_LIGHTNING),
    TrainerRule("lightning.Trainer", **_LIGHTNING),
    TrainerRule(
        "transformers.Trainer",
        model=Arg("model", 0),
        train=(Arg("train_dataset", 3),),
        validation=(Arg("eval_dataset", 4),),
        fit="train",
        predict=("predict",),
    ),
)

_LIGHTNING_HOOKS = (
    "training_step",
    "validation_step",
    "test_step",
    "predict_step",
    "configure_optimizers",
    "train_dataloader",
    "val_dataloader",
)
#: Library base classes -> the methods their framework calls on a user's subclass (run when an
#: instance is created).
FRAMEWORK_HOOKS: dict[str, tuple[str, ...]] = {
    "pytorch_lightning.LightningModule": _LIGHTNING_HOOKS,
    "lightning.LightningModule": _LIGHTNING_HOOKS,
    "transformers.Trainer": ("compute_loss", "training_step", "prediction_step"),
    "keras.Model": ("train_step", "test_step"),
    "tensorflow.keras.Model": ("train_step", "test_step"),
}

#: Methods whose result is one number (``loss.item()``): never a vector of predictions.
SCALAR_METHODS = frozenset({"item"})


def _matches(pattern: str, parts: list[str]) -> bool:
    """Root and last name as in ``pattern`` (``*`` globs within a part); the pattern's middle parts
    appear in order among the qualified name's (so private module paths match too)."""
    want = pattern.split(".")
    if want[0] != parts[0] or len(parts) < len(want) or len(want) < 2:
        return False
    if not fnmatch.fnmatchcase(parts[-1], want[-1]):
        return False
    middle = iter(parts[1:-1])
    return all(any(fnmatch.fnmatchcase(p, w) for p in middle) for w in want[1:-1])


@lru_cache(maxsize=4096)
def call_rules(qualname: str) -> tuple[CallRule, ...]:
    """The ``at="call"`` rows that match a qualified name (root package and last name parts).

    Examples
    --------
    >>> [(r.role, r.value) for r in call_rules("torch.utils.data.dataset.random_split")]
    [('split', 'single_holdout')]
    >>> [r.role for r in call_rules("torchvision.models.resnet.resnet18")]
    ['model']
    >>> call_rules("transformers.AutoTokenizer.from_pretrained")
    ()
    """
    parts = qualname.split(".")
    return tuple(r for r in CALL_RULES if r.at == "call" and _matches(r.call, parts))


@lru_cache(maxsize=512)
def method_rules(name: str) -> tuple[CallRule, ...]:
    """The ``at="method"`` rows for a method name."""
    return tuple(r for r in CALL_RULES if r.at == "method" and r.call == name)


def rules_at(at: str) -> tuple[CallRule, ...]:
    """The keyword rows of every model constructor (``"model"``) or ``fit`` (``"fit"``)."""
    return _AT[at]


_AT = {at: tuple(r for r in CALL_RULES if r.at == at) for at in ("model", "fit")}


@lru_cache(maxsize=1024)
def trainer_rule(qualname: str) -> TrainerRule | None:
    """The trainer a qualified name constructs, if any."""
    parts = qualname.split(".")
    for t in TRAINERS:
        if _matches(t.call, parts):
            return t
    return None


def hooks_of(qualname: str) -> tuple[str, ...]:
    """Framework hook methods of a library base class."""
    parts = qualname.split(".")
    return next((h for base, h in FRAMEWORK_HOOKS.items() if _matches(base, parts)), ())
