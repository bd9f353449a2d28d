# Generated from compare/recipes/tables.py by `python -m compare.scripts`: change the recipe there and regenerate.
# Plain bash: an edited copy runs as is, but regenerating overwrites edits made here.
#
# CAPS on imputation: ETTh1, ETTh2, ETTm1, ETTm2, ECL, Weather.
# TSLib's imputation loop as its iTransformer blocks set it (data, batch, learning rate, epochs; its ETTh2 values on datasets TSLib runs no iTransformer on),
# with CAPS's own architecture as in its long-term recipe (--d_model 0: the official width rule, 4 heads, 3 layers, no dropout)
# and --caps_direction auto: bidirectional blocks on the window tasks, causal on forecasting (layers/CAPS_Attention.md).

export CUDA_VISIBLE_DEVICES=0

model_name=CAPS

python -m data_provider.fetch ETTh1 --root ./dataset || exit 1
python -m data_provider.fetch ETTh2 --root ./dataset || exit 1
python -m data_provider.fetch ETTm1 --root ./dataset || exit 1
python -m data_provider.fetch ETTm2 --root ./dataset || exit 1
python -m data_provider.fetch electricity --root ./dataset || exit 1
python -m data_provider.fetch weather --root ./dataset || exit 1

# ETTh1: the flags above.
python -u run.py \
  --task_name imputation \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTh1.csv \
  --model_id ETTh1_mask_0.125 \
  --mask_rate 0.125 \
  --model $model_name \
  --data ETTh1 \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 0 \
  --e_layers 3 \
  --enc_in 7 \
  --dec_in 7 \
  --c_out 7 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

python -u run.py \
  --task_name imputation \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTh1.csv \
  --model_id ETTh1_mask_0.25 \
  --mask_rate 0.25 \
  --model $model_name \
  --data ETTh1 \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 0 \
  --e_layers 3 \
  --enc_in 7 \
  --dec_in 7 \
  --c_out 7 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

python -u run.py \
  --task_name imputation \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTh1.csv \
  --model_id ETTh1_mask_0.375 \
  --mask_rate 0.375 \
  --model $model_name \
  --data ETTh1 \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 0 \
  --e_layers 3 \
  --enc_in 7 \
  --dec_in 7 \
  --c_out 7 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

python -u run.py \
  --task_name imputation \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTh1.csv \
  --model_id ETTh1_mask_0.5 \
  --mask_rate 0.5 \
  --model $model_name \
  --data ETTh1 \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 0 \
  --e_layers 3 \
  --enc_in 7 \
  --dec_in 7 \
  --c_out 7 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

# ETTh2: the flags above.
python -u run.py \
  --task_name imputation \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTh2.csv \
  --model_id ETTh2_mask_0.125 \
  --mask_rate 0.125 \
  --model $model_name \
  --data ETTh2 \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 0 \
  --e_layers 3 \
  --enc_in 7 \
  --dec_in 7 \
  --c_out 7 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

python -u run.py \
  --task_name imputation \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTh2.csv \
  --model_id ETTh2_mask_0.25 \
  --mask_rate 0.25 \
  --model $model_name \
  --data ETTh2 \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 0 \
  --e_layers 3 \
  --enc_in 7 \
  --dec_in 7 \
  --c_out 7 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

python -u run.py \
  --task_name imputation \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTh2.csv \
  --model_id ETTh2_mask_0.375 \
  --mask_rate 0.375 \
  --model $model_name \
  --data ETTh2 \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 0 \
  --e_layers 3 \
  --enc_in 7 \
  --dec_in 7 \
  --c_out 7 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

python -u run.py \
  --task_name imputation \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTh2.csv \
  --model_id ETTh2_mask_0.5 \
  --mask_rate 0.5 \
  --model $model_name \
  --data ETTh2 \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 0 \
  --e_layers 3 \
  --enc_in 7 \
  --dec_in 7 \
  --c_out 7 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

# ETTm1: the flags above.
python -u run.py \
  --task_name imputation \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTm1.csv \
  --model_id ETTm1_mask_0.125 \
  --mask_rate 0.125 \
  --model $model_name \
  --data ETTm1 \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 0 \
  --e_layers 3 \
  --enc_in 7 \
  --dec_in 7 \
  --c_out 7 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

python -u run.py \
  --task_name imputation \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTm1.csv \
  --model_id ETTm1_mask_0.25 \
  --mask_rate 0.25 \
  --model $model_name \
  --data ETTm1 \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 0 \
  --e_layers 3 \
  --enc_in 7 \
  --dec_in 7 \
  --c_out 7 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

python -u run.py \
  --task_name imputation \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTm1.csv \
  --model_id ETTm1_mask_0.375 \
  --mask_rate 0.375 \
  --model $model_name \
  --data ETTm1 \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 0 \
  --e_layers 3 \
  --enc_in 7 \
  --dec_in 7 \
  --c_out 7 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

python -u run.py \
  --task_name imputation \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTm1.csv \
  --model_id ETTm1_mask_0.5 \
  --mask_rate 0.5 \
  --model $model_name \
  --data ETTm1 \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 0 \
  --e_layers 3 \
  --enc_in 7 \
  --dec_in 7 \
  --c_out 7 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

# ETTm2: the flags above.
python -u run.py \
  --task_name imputation \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTm2.csv \
  --model_id ETTm2_mask_0.125 \
  --mask_rate 0.125 \
  --model $model_name \
  --data ETTm2 \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 0 \
  --e_layers 3 \
  --enc_in 7 \
  --dec_in 7 \
  --c_out 7 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

python -u run.py \
  --task_name imputation \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTm2.csv \
  --model_id ETTm2_mask_0.25 \
  --mask_rate 0.25 \
  --model $model_name \
  --data ETTm2 \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 0 \
  --e_layers 3 \
  --enc_in 7 \
  --dec_in 7 \
  --c_out 7 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

python -u run.py \
  --task_name imputation \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTm2.csv \
  --model_id ETTm2_mask_0.375 \
  --mask_rate 0.375 \
  --model $model_name \
  --data ETTm2 \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 0 \
  --e_layers 3 \
  --enc_in 7 \
  --dec_in 7 \
  --c_out 7 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

python -u run.py \
  --task_name imputation \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTm2.csv \
  --model_id ETTm2_mask_0.5 \
  --mask_rate 0.5 \
  --model $model_name \
  --data ETTm2 \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 0 \
  --e_layers 3 \
  --enc_in 7 \
  --dec_in 7 \
  --c_out 7 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

# ECL: the flags above.
python -u run.py \
  --task_name imputation \
  --is_training 1 \
  --root_path ./dataset/electricity/ \
  --data_path electricity.csv \
  --model_id ECL_mask_0.125 \
  --mask_rate 0.125 \
  --model $model_name \
  --data custom \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 0 \
  --e_layers 3 \
  --enc_in 321 \
  --dec_in 321 \
  --c_out 321 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

python -u run.py \
  --task_name imputation \
  --is_training 1 \
  --root_path ./dataset/electricity/ \
  --data_path electricity.csv \
  --model_id ECL_mask_0.25 \
  --mask_rate 0.25 \
  --model $model_name \
  --data custom \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 0 \
  --e_layers 3 \
  --enc_in 321 \
  --dec_in 321 \
  --c_out 321 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

python -u run.py \
  --task_name imputation \
  --is_training 1 \
  --root_path ./dataset/electricity/ \
  --data_path electricity.csv \
  --model_id ECL_mask_0.375 \
  --mask_rate 0.375 \
  --model $model_name \
  --data custom \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 0 \
  --e_layers 3 \
  --enc_in 321 \
  --dec_in 321 \
  --c_out 321 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

python -u run.py \
  --task_name imputation \
  --is_training 1 \
  --root_path ./dataset/electricity/ \
  --data_path electricity.csv \
  --model_id ECL_mask_0.5 \
  --mask_rate 0.5 \
  --model $model_name \
  --data custom \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 0 \
  --e_layers 3 \
  --enc_in 321 \
  --dec_in 321 \
  --c_out 321 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

# Weather: the flags above.
python -u run.py \
  --task_name imputation \
  --is_training 1 \
  --root_path ./dataset/weather/ \
  --data_path weather.csv \
  --model_id weather_mask_0.125 \
  --mask_rate 0.125 \
  --model $model_name \
  --data custom \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 0 \
  --e_layers 3 \
  --enc_in 21 \
  --dec_in 21 \
  --c_out 21 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

python -u run.py \
  --task_name imputation \
  --is_training 1 \
  --root_path ./dataset/weather/ \
  --data_path weather.csv \
  --model_id weather_mask_0.25 \
  --mask_rate 0.25 \
  --model $model_name \
  --data custom \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 0 \
  --e_layers 3 \
  --enc_in 21 \
  --dec_in 21 \
  --c_out 21 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

python -u run.py \
  --task_name imputation \
  --is_training 1 \
  --root_path ./dataset/weather/ \
  --data_path weather.csv \
  --model_id weather_mask_0.375 \
  --mask_rate 0.375 \
  --model $model_name \
  --data custom \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 0 \
  --e_layers 3 \
  --enc_in 21 \
  --dec_in 21 \
  --c_out 21 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

python -u run.py \
  --task_name imputation \
  --is_training 1 \
  --root_path ./dataset/weather/ \
  --data_path weather.csv \
  --model_id weather_mask_0.5 \
  --mask_rate 0.5 \
  --model $model_name \
  --data custom \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 0 \
  --e_layers 3 \
  --enc_in 21 \
  --dec_in 21 \
  --c_out 21 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto
