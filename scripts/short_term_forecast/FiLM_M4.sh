# Generated from compare/recipes/tables.py by `python -m compare.scripts`: change the recipe there and regenerate.
# Plain bash: an edited copy runs as is, but regenerating overwrites edits made here.
#
# FiLM on short_term_forecast: Monthly, Yearly, Quarterly, Daily, Weekly, Hourly.

export CUDA_VISIBLE_DEVICES=0

model_name=FiLM

# Monthly: TSLib's scripts/short_term_forecast/FiLM_M4.sh.
python -u run.py \
  --task_name short_term_forecast \
  --is_training 1 \
  --root_path ./dataset/m4 \
  --seasonal_patterns Monthly \
  --model_id m4_Monthly \
  --model $model_name \
  --data m4 \
  --features M \
  --e_layers 2 \
  --d_layers 1 \
  --factor 3 \
  --enc_in 1 \
  --dec_in 1 \
  --c_out 1 \
  --batch_size 16 \
  --d_model 32 \
  --d_ff 32 \
  --top_k 5 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --loss SMAPE

# Yearly: TSLib's scripts/short_term_forecast/FiLM_M4.sh.
python -u run.py \
  --task_name short_term_forecast \
  --is_training 1 \
  --root_path ./dataset/m4 \
  --seasonal_patterns Yearly \
  --model_id m4_Yearly \
  --model $model_name \
  --data m4 \
  --features M \
  --e_layers 2 \
  --d_layers 1 \
  --factor 3 \
  --enc_in 1 \
  --dec_in 1 \
  --c_out 1 \
  --batch_size 16 \
  --d_model 16 \
  --d_ff 32 \
  --top_k 5 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --loss SMAPE

# Quarterly: TSLib's scripts/short_term_forecast/FiLM_M4.sh.
python -u run.py \
  --task_name short_term_forecast \
  --is_training 1 \
  --root_path ./dataset/m4 \
  --seasonal_patterns Quarterly \
  --model_id m4_Quarterly \
  --model $model_name \
  --data m4 \
  --features M \
  --e_layers 2 \
  --d_layers 1 \
  --factor 3 \
  --enc_in 1 \
  --dec_in 1 \
  --c_out 1 \
  --batch_size 16 \
  --d_model 64 \
  --d_ff 64 \
  --top_k 5 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --loss SMAPE

# Daily: TSLib's scripts/short_term_forecast/FiLM_M4.sh.
python -u run.py \
  --task_name short_term_forecast \
  --is_training 1 \
  --root_path ./dataset/m4 \
  --seasonal_patterns Daily \
  --model_id m4_Daily \
  --model $model_name \
  --data m4 \
  --features M \
  --e_layers 2 \
  --d_layers 1 \
  --factor 3 \
  --enc_in 1 \
  --dec_in 1 \
  --c_out 1 \
  --batch_size 16 \
  --d_model 16 \
  --d_ff 16 \
  --top_k 5 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --loss SMAPE

# Weekly: TSLib's scripts/short_term_forecast/FiLM_M4.sh.
python -u run.py \
  --task_name short_term_forecast \
  --is_training 1 \
  --root_path ./dataset/m4 \
  --seasonal_patterns Weekly \
  --model_id m4_Weekly \
  --model $model_name \
  --data m4 \
  --features M \
  --e_layers 2 \
  --d_layers 1 \
  --factor 3 \
  --enc_in 1 \
  --dec_in 1 \
  --c_out 1 \
  --batch_size 16 \
  --d_model 32 \
  --d_ff 32 \
  --top_k 5 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --loss SMAPE

# Hourly: TSLib's scripts/short_term_forecast/FiLM_M4.sh.
python -u run.py \
  --task_name short_term_forecast \
  --is_training 1 \
  --root_path ./dataset/m4 \
  --seasonal_patterns Hourly \
  --model_id m4_Hourly \
  --model $model_name \
  --data m4 \
  --features M \
  --e_layers 2 \
  --d_layers 1 \
  --factor 3 \
  --enc_in 1 \
  --dec_in 1 \
  --c_out 1 \
  --batch_size 16 \
  --d_model 32 \
  --d_ff 32 \
  --top_k 5 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --loss SMAPE
