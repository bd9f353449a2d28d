# Generated from compare/recipes/tables.py by `python -m compare.scripts`: change the recipe there and regenerate.
# Plain bash: an edited copy runs as is, but regenerating overwrites edits made here.
#
# CAPS on short_term_forecast: Monthly, Yearly, Quarterly, Weekly, Daily, Hourly.
# TSLib's short_term_forecast loop as its iTransformer blocks set it (data, batch, learning rate, epochs; its Monthly values on datasets TSLib runs no iTransformer on),
# with CAPS's own architecture as in its long-term recipe (--d_model 0: the official width rule, 4 heads, 3 layers, no dropout)
# and --caps_direction auto: bidirectional blocks on the window tasks, causal on forecasting (layers/CAPS_Attention.md).

export CUDA_VISIBLE_DEVICES=0

model_name=CAPS

python -m data_provider.fetch m4 --root ./dataset || exit 1

# Monthly: the flags above.
python -u run.py \
  --task_name short_term_forecast \
  --is_training 1 \
  --root_path ./dataset/m4 \
  --seasonal_patterns Monthly \
  --model_id m4_Monthly \
  --model $model_name \
  --data m4 \
  --features M \
  --e_layers 3 \
  --enc_in 1 \
  --dec_in 1 \
  --c_out 1 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --loss SMAPE \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

# Yearly: the flags above.
python -u run.py \
  --task_name short_term_forecast \
  --is_training 1 \
  --root_path ./dataset/m4 \
  --seasonal_patterns Yearly \
  --model_id m4_Yearly \
  --model $model_name \
  --data m4 \
  --features M \
  --e_layers 3 \
  --enc_in 1 \
  --dec_in 1 \
  --c_out 1 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --loss SMAPE \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

# Quarterly: the flags above.
python -u run.py \
  --task_name short_term_forecast \
  --is_training 1 \
  --root_path ./dataset/m4 \
  --seasonal_patterns Quarterly \
  --model_id m4_Quarterly \
  --model $model_name \
  --data m4 \
  --features M \
  --e_layers 3 \
  --enc_in 1 \
  --dec_in 1 \
  --c_out 1 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --loss SMAPE \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

# Weekly: the flags above.
python -u run.py \
  --task_name short_term_forecast \
  --is_training 1 \
  --root_path ./dataset/m4 \
  --seasonal_patterns Weekly \
  --model_id m4_Weekly \
  --model $model_name \
  --data m4 \
  --features M \
  --e_layers 3 \
  --enc_in 1 \
  --dec_in 1 \
  --c_out 1 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --loss SMAPE \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

# Daily: the flags above.
python -u run.py \
  --task_name short_term_forecast \
  --is_training 1 \
  --root_path ./dataset/m4 \
  --seasonal_patterns Daily \
  --model_id m4_Daily \
  --model $model_name \
  --data m4 \
  --features M \
  --e_layers 3 \
  --enc_in 1 \
  --dec_in 1 \
  --c_out 1 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --loss SMAPE \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

# Hourly: the flags above.
python -u run.py \
  --task_name short_term_forecast \
  --is_training 1 \
  --root_path ./dataset/m4 \
  --seasonal_patterns Hourly \
  --model_id m4_Hourly \
  --model $model_name \
  --data m4 \
  --features M \
  --e_layers 3 \
  --enc_in 1 \
  --dec_in 1 \
  --c_out 1 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --loss SMAPE \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto
