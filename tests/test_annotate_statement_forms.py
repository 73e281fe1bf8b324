"""Every statement form that can hold a call is walked (issue 33 item 6).

A script's work is often reached only through a form the interpreter used to skip:
``raise SystemExit(main())`` hid ``main()`` and gave validation ``none`` on a real XGBoost script.
Each case below reaches the same ``main()`` (a ``train_test_split`` hold-out and a logistic
regression) through one form; the property test nests several, and checks the converse: the
same chain inside a function nobody calls is not reached.
"""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given
from hypothesis import strategies as st

from automd_analysis.annotate.code import annotate_sources
from automd_analysis.annotate.practices import TaskFacts

CLS = TaskFacts(kind="classification", ehr=True, external_shift=False)

MAIN = """
import sys

import fire
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split


def run_now(step):
    step()
    return step


def main():
    df = pd.read_csv("train.csv")
    te = pd.read_csv("test.csv")
    tr, va = train_test_split(df, test_size=0.2)
    m = LogisticRegression().fit(tr[["a"]], tr["y"])
    pd.DataFrame({"p": m.predict_proba(te[["a"]])[:, 1]}).to_csv("submission.csv")
    return 0
"""
SPLIT_LINE = MAIN.splitlines().index("    tr, va = train_test_split(df, test_size=0.2)") + 1


def _analyse(tail: str) -> dict:
    code = MAIN + "\n" + textwrap.dedent(tail)
    found, trace = annotate_sources([("train.py", code)], CLS, ["train.py"])
    assert not trace.notes
    return found


def _validation(tail: str):
    f = _analyse(tail)["validation_design"]
    return f.value, [line for _, line in f.evidence]


FORMS = {
    "raise": 'if __name__ == "__main__":\n    raise SystemExit(main())\n',
    "raise_from_cause": "raise SystemExit(0) from ValueError(main())\n",
    "assert_test": "assert main() == 0\n",
    "assert_message": 'assert True, f"{main()}"\n',
    "return": "def run():\n    return main()\n\n\nrun()\n",
    "with": "with open(str(main())) as fh:\n    pass\n",
    "lambda": "go = lambda: main()\ngo()\n",
    "list_comprehension": "codes = [main() for _ in range(1)]\n",
    "generator": "any(main() for _ in range(1))\n",
    "dict_comprehension": '{k: main() for k in "a"}\n',
    "f_string": 'print(f"exit code {main()}")\n',
    "f_string_format_spec": 'print(f"{1:{main()}}")\n',
    "decorator_runs_function": "@run_now\ndef step():\n    main()\n",
    "decorator_argument": "def tag(x):\n    return lambda f: f\n\n\n@tag(main())\ndef other():\n    pass\n",
    "class_decorator": "def build(cls):\n    cls.code = main()\n    return cls\n\n\n@build\nclass Job:\n    pass\n",
    "entry_point_decorator": (
        "import typer\n\napp = typer.Typer()\n\n\n@app.command()\ndef train():\n    main()\n\n\n"
        'if __name__ == "__main__":\n    app()\n'
    ),
    "handed_to_library": 'if __name__ == "__main__":\n    fire.Fire(main)\n',
    "handed_to_a_method": "import optuna\n\noptuna.create_study().optimize(lambda t: main())\n",
    "thread_target": "import threading\n\nthreading.Thread(target=main).start()\n",
    "match_guard": "match sys.argv:\n    case _ if main():\n        pass\n",
    "delete_target": "d = {}\ndel d[main()]\n",
    "slice_bound": "xs = [1, 2]\nxs[: main()]\n",
    "tuple_slice_bound": "xs = [[1]]\nxs[0:1, : main()]\n",
    "walrus_in_conditional": "x = (y := main()) if len(sys.argv) > 1 else 0\n",
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_main_reached_through_each_form_is_analysed(form):
    value, lines = _validation(FORMS[form])
    assert value == ("single_holdout",)
    assert lines == [SPLIT_LINE]  # the split itself, in main()


def test_nothing_calls_main_nothing_is_validated():
    assert _validation("pass\n") == (("none",), [])
    # an uncalled lambda is walked with the unreached code: what it reaches does not count
    assert _validation("go = lambda: main()\n") == (("none",), [])


def test_a_library_decorator_that_is_not_an_entry_point_does_not_run_the_function():
    tail = "import functools\n\n\n@functools.lru_cache(maxsize=None)\ndef cached():\n    main()\n"
    assert _validation(tail) == (("none",), [])


def test_a_user_decorator_returning_a_wrapper_still_calls_the_function():
    tail = """
    def timed(f):
        def wrap(*a, **k):
            return f(*a, **k)
        return wrap


    @timed
    def entry():
        return main()


    entry()
    """
    assert _validation(tail)[0] == ("single_holdout",)


# -------------------------------------------------------------------------------- property

# (quotes: an f-string may sit inside the f-string of a statement, never inside itself)
EXPRESSION_WRAPPERS = [
    "f'{{ {} }}'",
    "[{} for _ in range(1)][0]",
    "(lambda: {})()",
    "{{0: {}}}[0]",
    "(0 if len(sys.argv) > 5 else {})",
    "(z := {})",
    "next(iter([{}]))",
    "str({})",
]
STATEMENT_WRAPPERS = [
    "raise SystemExit({})",
    "assert {} is not None",
    'assert True, f"{{{}}}"',
    "with open(str({})) as fh:\n    pass",
    "def _run():\n    return {}\n\n\n_run()",
    "@run_now\ndef _step():\n    return {}",
    "match 0:\n    case _ if {}:\n        pass",
    "for _ in [{}]:\n    pass",
    "print({})",
    "fire.Fire(lambda: {})",
]


@given(
    st.lists(st.sampled_from(EXPRESSION_WRAPPERS), max_size=3, unique=True),
    st.sampled_from(STATEMENT_WRAPPERS),
    st.booleans(),
)
def test_property_main_reached_through_nested_forms_is_analysed_and_dead_code_is_not(
    inner, outer, guarded
):
    call = "main()"
    for wrapper in inner:
        call = wrapper.format(call)
    statement = outer.format(call)
    if guarded:
        statement = 'if __name__ == "__main__":\n' + textwrap.indent(statement, "    ")
    assert _validation(statement) == (("single_holdout",), [SPLIT_LINE])
    dead = "def _never_called():\n" + textwrap.indent(statement, "    ")
    assert _validation(dead) == (("none",), [])
