# Generated from compare/recipes/tables.py by `python -m compare.scripts`: change the recipe there and regenerate.
# Plain bash: an edited copy runs as is, but regenerating overwrites edits made here.
#
# WPMixer on ETTh1 (7 variates), horizons 96 192 336 720 (L = 512).

export CUDA_VISIBLE_DEVICES=0

model_name=WPMixer

# ETTh1: hyper-parameters from TSLib's WPMixer_ETTh1.sh; unlisted flags keep run.py defaults.
python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTh1.csv \
  --model_id ETTh1_512_96 \
  --model $model_name \
  --data ETTh1 \
  --features M \
  --seq_len 512 \
  --label_len 0 \
  --pred_len 96 \
  --d_model 256 \
  --patch_len 16 \
  --batch_size 256 \
  --learning_rate 0.000242438 \
  --lradj type3 \
  --dropout 0.4 \
  --patience 12 \
  --train_epochs 30 \
  --use_amp

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTh1.csv \
  --model_id ETTh1_512_192 \
  --model $model_name \
  --data ETTh1 \
  --features M \
  --seq_len 512 \
  --label_len 0 \
  --pred_len 192 \
  --d_model 256 \
  --patch_len 16 \
  --batch_size 256 \
  --learning_rate 0.000201437 \
  --lradj type3 \
  --dropout 0.05 \
  --patience 12 \
  --train_epochs 30 \
  --use_amp

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTh1.csv \
  --model_id ETTh1_512_336 \
  --model $model_name \
  --data ETTh1 \
  --features M \
  --seq_len 512 \
  --label_len 0 \
  --pred_len 336 \
  --d_model 256 \
  --patch_len 16 \
  --batch_size 256 \
  --learning_rate 0.000132929 \
  --lradj type3 \
  --dropout 0.0 \
  --patience 12 \
  --train_epochs 30 \
  --use_amp

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTh1.csv \
  --model_id ETTh1_512_720 \
  --model $model_name \
  --data ETTh1 \
  --features M \
  --seq_len 512 \
  --label_len 0 \
  --pred_len 720 \
  --d_model 128 \
  --patch_len 16 \
  --batch_size 256 \
  --learning_rate 0.000239762 \
  --lradj type3 \
  --dropout 0.2 \
  --patience 12 \
  --train_epochs 30 \
  --use_amp
