# Generated from compare/recipes/tables.py by `python -m compare.scripts`: change the recipe there and regenerate.
# Plain bash: an edited copy runs as is, but regenerating overwrites edits made here.
#
# TimeMixer on ETTh1 (7 variates), horizons 96 192 336 720 (L = 96).

export CUDA_VISIBLE_DEVICES=0

model_name=TimeMixer

# ETTh1: hyper-parameters from TSLib's TimeMixer_ETTh1.sh; unlisted flags keep run.py defaults.
python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTh1.csv \
  --model_id ETTh1_96_96 \
  --model $model_name \
  --data ETTh1 \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 96 \
  --e_layers 2 \
  --enc_in 7 \
  --c_out 7 \
  --des Exp \
  --itr 1 \
  --d_model 16 \
  --d_ff 32 \
  --batch_size 128 \
  --learning_rate 0.01 \
  --train_epochs 10 \
  --patience 10 \
  --down_sampling_layers 3 \
  --down_sampling_method avg \
  --down_sampling_window 2

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTh1.csv \
  --model_id ETTh1_96_192 \
  --model $model_name \
  --data ETTh1 \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 192 \
  --e_layers 2 \
  --enc_in 7 \
  --c_out 7 \
  --des Exp \
  --itr 1 \
  --d_model 16 \
  --d_ff 32 \
  --batch_size 128 \
  --learning_rate 0.01 \
  --train_epochs 10 \
  --patience 10 \
  --down_sampling_layers 3 \
  --down_sampling_method avg \
  --down_sampling_window 2

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTh1.csv \
  --model_id ETTh1_96_336 \
  --model $model_name \
  --data ETTh1 \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 336 \
  --e_layers 2 \
  --enc_in 7 \
  --c_out 7 \
  --des Exp \
  --itr 1 \
  --d_model 16 \
  --d_ff 32 \
  --batch_size 128 \
  --learning_rate 0.01 \
  --train_epochs 10 \
  --patience 10 \
  --down_sampling_layers 3 \
  --down_sampling_method avg \
  --down_sampling_window 2

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTh1.csv \
  --model_id ETTh1_96_720 \
  --model $model_name \
  --data ETTh1 \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 720 \
  --e_layers 2 \
  --enc_in 7 \
  --c_out 7 \
  --des Exp \
  --itr 1 \
  --d_model 16 \
  --d_ff 32 \
  --batch_size 128 \
  --learning_rate 0.01 \
  --train_epochs 10 \
  --patience 10 \
  --down_sampling_layers 3 \
  --down_sampling_method avg \
  --down_sampling_window 2
