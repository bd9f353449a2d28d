"""Use a trained model on new data (issue 52): `predict.load.load_trained(folder)` reads `<checkpoints>/<setting>/`
(the weights and their model card, exp/model_card.py) and gives the model of its task; `python -m predict FOLDER
FILE` writes its outputs (predict/cli.py). Manual: docs/predict.md.

    from predict.load import load_trained
    model = load_trained("checkpoints/<setting>")
    future = model.forecast(pandas.read_csv("new.csv"))     # DataFrame: date + one column per variate

(The package imports nothing itself: its modules import it, and the layout test counts that as a circle.)
"""
