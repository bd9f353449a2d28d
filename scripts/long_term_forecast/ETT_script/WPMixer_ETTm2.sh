# Generated from compare/recipes/tables.py by `python -m compare.scripts`: change the recipe there and regenerate.
# Plain bash: an edited copy runs as is, but regenerating overwrites edits made here.
#
# WPMixer on ETTm2 (7 variates), horizons 96 192 336 720 (L = 512).

export CUDA_VISIBLE_DEVICES=0

model_name=WPMixer

# ETTm2: hyper-parameters from TSLib's WPMixer_ETTm2.sh; unlisted flags keep run.py defaults.
python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTm2.csv \
  --model_id ETTm2_512_96 \
  --model $model_name \
  --data ETTm2 \
  --features M \
  --seq_len 512 \
  --label_len 0 \
  --pred_len 96 \
  --d_model 256 \
  --patch_len 48 \
  --batch_size 256 \
  --learning_rate 0.00076587 \
  --lradj type3 \
  --dropout 0.4 \
  --patience 12 \
  --train_epochs 80 \
  --use_amp

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTm2.csv \
  --model_id ETTm2_512_192 \
  --model $model_name \
  --data ETTm2 \
  --features M \
  --seq_len 512 \
  --label_len 0 \
  --pred_len 192 \
  --d_model 256 \
  --patch_len 48 \
  --batch_size 256 \
  --learning_rate 0.000275775 \
  --lradj type3 \
  --dropout 0.2 \
  --patience 12 \
  --train_epochs 80 \
  --use_amp

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTm2.csv \
  --model_id ETTm2_512_336 \
  --model $model_name \
  --data ETTm2 \
  --features M \
  --seq_len 512 \
  --label_len 0 \
  --pred_len 336 \
  --d_model 256 \
  --patch_len 48 \
  --batch_size 256 \
  --learning_rate 0.000234608 \
  --lradj type3 \
  --dropout 0.4 \
  --patience 12 \
  --train_epochs 80 \
  --use_amp

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTm2.csv \
  --model_id ETTm2_512_720 \
  --model $model_name \
  --data ETTm2 \
  --features M \
  --seq_len 512 \
  --label_len 0 \
  --pred_len 720 \
  --d_model 256 \
  --patch_len 48 \
  --batch_size 256 \
  --learning_rate 0.001039536 \
  --lradj type3 \
  --dropout 0.4 \
  --patience 12 \
  --train_epochs 80 \
  --use_amp
