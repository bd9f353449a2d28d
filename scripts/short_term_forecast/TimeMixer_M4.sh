# Generated from compare/recipes/tables.py by `python -m compare.scripts`: change the recipe there and regenerate.
# Plain bash: an edited copy runs as is, but regenerating overwrites edits made here.
#
# TimeMixer on short_term_forecast: Monthly, Yearly, Quarterly, Daily, Weekly, Hourly.

export CUDA_VISIBLE_DEVICES=0

model_name=TimeMixer

# Monthly: TSLib's scripts/short_term_forecast/TimeMixer_M4.sh.
python -u run.py \
  --task_name short_term_forecast \
  --is_training 1 \
  --root_path ./dataset/m4 \
  --seasonal_patterns Monthly \
  --model_id m4_Monthly \
  --model $model_name \
  --data m4 \
  --features M \
  --e_layers 4 \
  --d_layers 1 \
  --factor 3 \
  --enc_in 1 \
  --dec_in 1 \
  --c_out 1 \
  --batch_size 128 \
  --d_model 32 \
  --d_ff 32 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.01 \
  --train_epochs 50 \
  --patience 20 \
  --down_sampling_layers 1 \
  --down_sampling_method avg \
  --down_sampling_window 2 \
  --loss SMAPE

# Yearly: TSLib's scripts/short_term_forecast/TimeMixer_M4.sh.
python -u run.py \
  --task_name short_term_forecast \
  --is_training 1 \
  --root_path ./dataset/m4 \
  --seasonal_patterns Yearly \
  --model_id m4_Yearly \
  --model $model_name \
  --data m4 \
  --features M \
  --e_layers 4 \
  --d_layers 1 \
  --factor 3 \
  --enc_in 1 \
  --dec_in 1 \
  --c_out 1 \
  --batch_size 128 \
  --d_model 32 \
  --d_ff 32 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.01 \
  --train_epochs 50 \
  --patience 20 \
  --down_sampling_layers 1 \
  --down_sampling_method avg \
  --down_sampling_window 2 \
  --loss SMAPE

# Quarterly: TSLib's scripts/short_term_forecast/TimeMixer_M4.sh.
python -u run.py \
  --task_name short_term_forecast \
  --is_training 1 \
  --root_path ./dataset/m4 \
  --seasonal_patterns Quarterly \
  --model_id m4_Quarterly \
  --model $model_name \
  --data m4 \
  --features M \
  --e_layers 4 \
  --d_layers 1 \
  --factor 3 \
  --enc_in 1 \
  --dec_in 1 \
  --c_out 1 \
  --batch_size 128 \
  --d_model 32 \
  --d_ff 64 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.01 \
  --train_epochs 50 \
  --patience 20 \
  --down_sampling_layers 1 \
  --down_sampling_method avg \
  --down_sampling_window 2 \
  --loss SMAPE

# Daily: TSLib's scripts/short_term_forecast/TimeMixer_M4.sh.
python -u run.py \
  --task_name short_term_forecast \
  --is_training 1 \
  --root_path ./dataset/m4 \
  --seasonal_patterns Daily \
  --model_id m4_Daily \
  --model $model_name \
  --data m4 \
  --features M \
  --e_layers 4 \
  --d_layers 1 \
  --factor 3 \
  --enc_in 1 \
  --dec_in 1 \
  --c_out 1 \
  --batch_size 128 \
  --d_model 32 \
  --d_ff 16 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.01 \
  --train_epochs 50 \
  --patience 20 \
  --down_sampling_layers 1 \
  --down_sampling_method avg \
  --down_sampling_window 2 \
  --loss SMAPE

# Weekly: TSLib's scripts/short_term_forecast/TimeMixer_M4.sh.
python -u run.py \
  --task_name short_term_forecast \
  --is_training 1 \
  --root_path ./dataset/m4 \
  --seasonal_patterns Weekly \
  --model_id m4_Weekly \
  --model $model_name \
  --data m4 \
  --features M \
  --e_layers 4 \
  --d_layers 1 \
  --factor 3 \
  --enc_in 1 \
  --dec_in 1 \
  --c_out 1 \
  --batch_size 128 \
  --d_model 32 \
  --d_ff 32 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.01 \
  --train_epochs 50 \
  --patience 20 \
  --down_sampling_layers 1 \
  --down_sampling_method avg \
  --down_sampling_window 2 \
  --loss SMAPE

# Hourly: TSLib's scripts/short_term_forecast/TimeMixer_M4.sh.
python -u run.py \
  --task_name short_term_forecast \
  --is_training 1 \
  --root_path ./dataset/m4 \
  --seasonal_patterns Hourly \
  --model_id m4_Hourly \
  --model $model_name \
  --data m4 \
  --features M \
  --e_layers 4 \
  --d_layers 1 \
  --factor 3 \
  --enc_in 1 \
  --dec_in 1 \
  --c_out 1 \
  --batch_size 128 \
  --d_model 32 \
  --d_ff 32 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.01 \
  --train_epochs 50 \
  --patience 20 \
  --down_sampling_layers 1 \
  --down_sampling_method avg \
  --down_sampling_window 2 \
  --loss SMAPE
