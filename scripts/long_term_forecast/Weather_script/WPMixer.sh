# Generated from compare/recipes/tables.py by `python -m compare.scripts`: change the recipe there and regenerate.
# Plain bash: an edited copy runs as is, but regenerating overwrites edits made here.
#
# WPMixer on Weather (21 variates), horizons 96 192 336 720 (L = 512).

export CUDA_VISIBLE_DEVICES=0

model_name=WPMixer

# Weather: hyper-parameters from TSLib's Weather_script/WPMixer.sh; unlisted flags keep run.py defaults.
python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/weather/ \
  --data_path weather.csv \
  --model_id weather_512_96 \
  --model $model_name \
  --data custom \
  --features M \
  --seq_len 512 \
  --label_len 0 \
  --pred_len 96 \
  --d_model 256 \
  --patch_len 16 \
  --batch_size 32 \
  --learning_rate 0.000913333 \
  --lradj type3 \
  --dropout 0.4 \
  --patience 12 \
  --train_epochs 60 \
  --use_amp \
  --enc_in 21 \
  --dec_in 21 \
  --c_out 21

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/weather/ \
  --data_path weather.csv \
  --model_id weather_512_192 \
  --model $model_name \
  --data custom \
  --features M \
  --seq_len 512 \
  --label_len 0 \
  --pred_len 192 \
  --d_model 128 \
  --patch_len 16 \
  --batch_size 64 \
  --learning_rate 0.001379042 \
  --lradj type3 \
  --dropout 0.4 \
  --patience 12 \
  --train_epochs 60 \
  --use_amp \
  --enc_in 21 \
  --dec_in 21 \
  --c_out 21

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/weather/ \
  --data_path weather.csv \
  --model_id weather_512_336 \
  --model $model_name \
  --data custom \
  --features M \
  --seq_len 512 \
  --label_len 0 \
  --pred_len 336 \
  --d_model 128 \
  --patch_len 16 \
  --batch_size 32 \
  --learning_rate 0.000607991 \
  --lradj type3 \
  --dropout 0.4 \
  --patience 12 \
  --train_epochs 60 \
  --use_amp \
  --enc_in 21 \
  --dec_in 21 \
  --c_out 21

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/weather/ \
  --data_path weather.csv \
  --model_id weather_512_720 \
  --model $model_name \
  --data custom \
  --features M \
  --seq_len 512 \
  --label_len 0 \
  --pred_len 720 \
  --d_model 128 \
  --patch_len 16 \
  --batch_size 128 \
  --learning_rate 0.001470479 \
  --lradj type3 \
  --dropout 0.4 \
  --patience 12 \
  --train_epochs 60 \
  --use_amp \
  --enc_in 21 \
  --dec_in 21 \
  --c_out 21
