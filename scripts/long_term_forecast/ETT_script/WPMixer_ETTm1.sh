# Generated from compare/recipes/tables.py by `python -m compare.scripts`: change the recipe there and regenerate.
# Plain bash: an edited copy runs as is, but regenerating overwrites edits made here.
#
# WPMixer on ETTm1 (7 variates), horizons 96 192 336 720 (L = 512).

export CUDA_VISIBLE_DEVICES=0

model_name=WPMixer

# ETTm1: hyper-parameters from TSLib's WPMixer_ETTm1.sh; unlisted flags keep run.py defaults.
python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTm1.csv \
  --model_id ETTm1_512_96 \
  --model $model_name \
  --data ETTm1 \
  --features M \
  --seq_len 512 \
  --label_len 0 \
  --pred_len 96 \
  --d_model 256 \
  --patch_len 48 \
  --batch_size 256 \
  --learning_rate 0.001277976 \
  --lradj type3 \
  --dropout 0.4 \
  --patience 12 \
  --train_epochs 80 \
  --use_amp

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTm1.csv \
  --model_id ETTm1_512_192 \
  --model $model_name \
  --data ETTm1 \
  --features M \
  --seq_len 512 \
  --label_len 0 \
  --pred_len 192 \
  --d_model 128 \
  --patch_len 48 \
  --batch_size 256 \
  --learning_rate 0.002415901 \
  --lradj type3 \
  --dropout 0.4 \
  --patience 12 \
  --train_epochs 80 \
  --use_amp

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTm1.csv \
  --model_id ETTm1_512_336 \
  --model $model_name \
  --data ETTm1 \
  --features M \
  --seq_len 512 \
  --label_len 0 \
  --pred_len 336 \
  --d_model 256 \
  --patch_len 48 \
  --batch_size 256 \
  --learning_rate 0.001594735 \
  --lradj type3 \
  --dropout 0.4 \
  --patience 12 \
  --train_epochs 80 \
  --use_amp

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTm1.csv \
  --model_id ETTm1_512_720 \
  --model $model_name \
  --data ETTm1 \
  --features M \
  --seq_len 512 \
  --label_len 0 \
  --pred_len 720 \
  --d_model 128 \
  --patch_len 48 \
  --batch_size 256 \
  --learning_rate 0.002011441 \
  --lradj type3 \
  --dropout 0.4 \
  --patience 12 \
  --train_epochs 80 \
  --use_amp
