# Generated from compare/recipes/tables.py by `python -m compare.scripts`: change the recipe there and regenerate.
# Plain bash: an edited copy runs as is, but regenerating overwrites edits made here.
#
# WPMixer on ECL (321 variates), horizons 96 192 336 720 (L = 512).

export CUDA_VISIBLE_DEVICES=0

model_name=WPMixer

# ECL: hyper-parameters from TSLib's ECL_script/WPMixer.sh; unlisted flags keep run.py defaults.
python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/electricity/ \
  --data_path electricity.csv \
  --model_id ECL_512_96 \
  --model $model_name \
  --data custom \
  --features M \
  --seq_len 512 \
  --label_len 0 \
  --pred_len 96 \
  --d_model 32 \
  --patch_len 16 \
  --batch_size 32 \
  --learning_rate 0.00328086 \
  --lradj type3 \
  --dropout 0.1 \
  --patience 12 \
  --train_epochs 100 \
  --use_amp \
  --enc_in 321 \
  --dec_in 321 \
  --c_out 321

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/electricity/ \
  --data_path electricity.csv \
  --model_id ECL_512_192 \
  --model $model_name \
  --data custom \
  --features M \
  --seq_len 512 \
  --label_len 0 \
  --pred_len 192 \
  --d_model 32 \
  --patch_len 16 \
  --batch_size 32 \
  --learning_rate 0.000493286 \
  --lradj type3 \
  --dropout 0.1 \
  --patience 12 \
  --train_epochs 100 \
  --use_amp \
  --enc_in 321 \
  --dec_in 321 \
  --c_out 321

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/electricity/ \
  --data_path electricity.csv \
  --model_id ECL_512_336 \
  --model $model_name \
  --data custom \
  --features M \
  --seq_len 512 \
  --label_len 0 \
  --pred_len 336 \
  --d_model 32 \
  --patch_len 16 \
  --batch_size 32 \
  --learning_rate 0.002505375 \
  --lradj type3 \
  --dropout 0.2 \
  --patience 12 \
  --train_epochs 100 \
  --use_amp \
  --enc_in 321 \
  --dec_in 321 \
  --c_out 321

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/electricity/ \
  --data_path electricity.csv \
  --model_id ECL_512_720 \
  --model $model_name \
  --data custom \
  --features M \
  --seq_len 512 \
  --label_len 0 \
  --pred_len 720 \
  --d_model 32 \
  --patch_len 16 \
  --batch_size 32 \
  --learning_rate 0.001977516 \
  --lradj type3 \
  --dropout 0.1 \
  --patience 12 \
  --train_epochs 100 \
  --use_amp \
  --enc_in 321 \
  --dec_in 321 \
  --c_out 321
