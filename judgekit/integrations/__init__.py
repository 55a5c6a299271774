"""judgekit where the experiment runs: a gated judge as an Inspect AI scorer, importers for other
tools' results (Hugging Face datasets, MLflow traces).

Each integration needs its tool, installed with an extra (``pip install 'judgekit-trust[inspect]'``,
``[hf]``, ``[mlflow]``); nothing here is imported by ``import judgekit``. Every call into judgekit
goes through :mod:`judgekit.integrations.bridge`.
"""
