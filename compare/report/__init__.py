"""The comparison report, from a folder's records alone (`python -m compare.report --out DIR`). Imports
compare/grid/ and compare/recipes/, never the runner:

    ranking          marks and ranks of one table line
    markdown         the text of the tables: numbers as printed, wide or tall layout
    significance     paired tests between two rows over seeds
    cell_bootstrap   bootstrap confidence intervals over (dataset, horizon) cells
    complete_block   the cells x models block where every model has a result (ranks, geo-means)
    reference        reference numbers (a paper's table, TSLib's runs) read from a CSV
    forecast_cells   a forecasting comparison's cells and each cell's numbers
    naive_scores     errors relative to the naive forecasters' on the same windows
    skill_scores     skill against seasonal naive and win rates, with intervals
    task_lines       the table lines of the other tasks
    seeds            what the seeds say: samples, marks, spreads per cell
    plots            the figures (matplotlib, Agg)
    cell_statistics  ranks, win rates and the Friedman / Nemenyi test over cells
    task_report      the report of imputation, anomaly detection, classification and M4
    paper_layout     ours beside the reference's numbers in the paper's layout (`paper_layout.csv` / `.tex`)
    forecast_tables  `table.md` and `table.csv` of a forecasting comparison
    build            the whole report folder; `__main__.py` is its command
"""
