# Generated from compare/recipes/tables.py by `python -m compare.scripts`: change the recipe there and regenerate.
# Plain bash: an edited copy runs as is, but regenerating overwrites edits made here.
#
# WPMixer on Traffic (862 variates), horizons 96 192 336 720 (L = 1200).

export CUDA_VISIBLE_DEVICES=0

model_name=WPMixer

# Traffic: hyper-parameters from TSLib's Traffic_script/WPMixer.sh; unlisted flags keep run.py defaults.
python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/traffic/ \
  --data_path traffic.csv \
  --model_id traffic_1200_96 \
  --model $model_name \
  --data custom \
  --features M \
  --seq_len 1200 \
  --label_len 0 \
  --pred_len 96 \
  --d_model 16 \
  --patch_len 16 \
  --batch_size 16 \
  --learning_rate 0.0010385 \
  --lradj type3 \
  --dropout 0.05 \
  --patience 12 \
  --train_epochs 60 \
  --use_amp \
  --enc_in 862 \
  --dec_in 862 \
  --c_out 862

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/traffic/ \
  --data_path traffic.csv \
  --model_id traffic_1200_192 \
  --model $model_name \
  --data custom \
  --features M \
  --seq_len 1200 \
  --label_len 0 \
  --pred_len 192 \
  --d_model 32 \
  --patch_len 16 \
  --batch_size 16 \
  --learning_rate 0.000567053 \
  --lradj type3 \
  --dropout 0.05 \
  --patience 12 \
  --train_epochs 60 \
  --use_amp \
  --enc_in 862 \
  --dec_in 862 \
  --c_out 862

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/traffic/ \
  --data_path traffic.csv \
  --model_id traffic_1200_336 \
  --model $model_name \
  --data custom \
  --features M \
  --seq_len 1200 \
  --label_len 0 \
  --pred_len 336 \
  --d_model 32 \
  --patch_len 16 \
  --batch_size 16 \
  --learning_rate 0.001026715 \
  --lradj type3 \
  --dropout 0.0 \
  --patience 12 \
  --train_epochs 50 \
  --use_amp \
  --enc_in 862 \
  --dec_in 862 \
  --c_out 862

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/traffic/ \
  --data_path traffic.csv \
  --model_id traffic_1200_720 \
  --model $model_name \
  --data custom \
  --features M \
  --seq_len 1200 \
  --label_len 0 \
  --pred_len 720 \
  --d_model 32 \
  --patch_len 16 \
  --batch_size 16 \
  --learning_rate 0.001496217 \
  --lradj type3 \
  --dropout 0.05 \
  --patience 12 \
  --train_epochs 60 \
  --use_amp \
  --enc_in 862 \
  --dec_in 862 \
  --c_out 862
