# Generated from compare/recipes/tables.py by `python -m compare.scripts`: change the recipe there and regenerate.
# Plain bash: an edited copy runs as is, but regenerating overwrites edits made here.
#
# TimeMixerPP on PEMS08 (170 variates), horizons 96 48 24 12 (L = 96).

export CUDA_VISIBLE_DEVICES=0

model_name=TimeMixerPP

# PEMS08: hyper-parameters from TimeMixer's PEMS08 recipe (the official TimeMixer repo's scripts/short_term_forecast/PEMS/TimeMixer.sh (it forecasts 12 steps; 24, 48 and 96 run the same block with that pred_len, as the CAPS paper reports TimeMixer there)) with conv down-sampling; no official TimeMixer++ scripts are published; unlisted flags keep run.py defaults.
# PEMS horizons in the official loop order; the paper reports 12-96.
python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/PEMS/ \
  --data_path PEMS08.npz \
  --model_id PEMS08_96_96 \
  --model $model_name \
  --data PEMS \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 96 \
  --e_layers 5 \
  --d_layers 1 \
  --factor 3 \
  --enc_in 170 \
  --dec_in 170 \
  --c_out 170 \
  --des Exp \
  --itr 1 \
  --use_norm 0 \
  --d_model 128 \
  --d_ff 256 \
  --channel_independence 0 \
  --batch_size 32 \
  --learning_rate 0.003 \
  --train_epochs 10 \
  --patience 10 \
  --down_sampling_layers 1 \
  --down_sampling_method conv \
  --down_sampling_window 2

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/PEMS/ \
  --data_path PEMS08.npz \
  --model_id PEMS08_96_48 \
  --model $model_name \
  --data PEMS \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 48 \
  --e_layers 5 \
  --d_layers 1 \
  --factor 3 \
  --enc_in 170 \
  --dec_in 170 \
  --c_out 170 \
  --des Exp \
  --itr 1 \
  --use_norm 0 \
  --d_model 128 \
  --d_ff 256 \
  --channel_independence 0 \
  --batch_size 32 \
  --learning_rate 0.003 \
  --train_epochs 10 \
  --patience 10 \
  --down_sampling_layers 1 \
  --down_sampling_method conv \
  --down_sampling_window 2

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/PEMS/ \
  --data_path PEMS08.npz \
  --model_id PEMS08_96_24 \
  --model $model_name \
  --data PEMS \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 24 \
  --e_layers 5 \
  --d_layers 1 \
  --factor 3 \
  --enc_in 170 \
  --dec_in 170 \
  --c_out 170 \
  --des Exp \
  --itr 1 \
  --use_norm 0 \
  --d_model 128 \
  --d_ff 256 \
  --channel_independence 0 \
  --batch_size 32 \
  --learning_rate 0.003 \
  --train_epochs 10 \
  --patience 10 \
  --down_sampling_layers 1 \
  --down_sampling_method conv \
  --down_sampling_window 2

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/PEMS/ \
  --data_path PEMS08.npz \
  --model_id PEMS08_96_12 \
  --model $model_name \
  --data PEMS \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 12 \
  --e_layers 5 \
  --d_layers 1 \
  --factor 3 \
  --enc_in 170 \
  --dec_in 170 \
  --c_out 170 \
  --des Exp \
  --itr 1 \
  --use_norm 0 \
  --d_model 128 \
  --d_ff 256 \
  --channel_independence 0 \
  --batch_size 32 \
  --learning_rate 0.003 \
  --train_epochs 10 \
  --patience 10 \
  --down_sampling_layers 1 \
  --down_sampling_method conv \
  --down_sampling_window 2
