# Generated from compare/recipes/tables.py by `python -m compare.scripts`: change the recipe there and regenerate.
# Plain bash: an edited copy runs as is, but regenerating overwrites edits made here.
#
# iTransformer on PEMS03 (358 variates), horizons 96 48 24 12 (L = 96).

export CUDA_VISIBLE_DEVICES=0

model_name=iTransformer

# PEMS03: hyper-parameters from the official iTransformer repo's scripts/multivariate_forecasting/PEMS/iTransformer_PEMS03.sh; unlisted flags keep run.py defaults.
# PEMS horizons in the official loop order; the paper reports 12-96.
python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/PEMS/ \
  --data_path PEMS03.npz \
  --model_id PEMS03_96_96 \
  --model $model_name \
  --data PEMS \
  --features M \
  --seq_len 96 \
  --pred_len 96 \
  --e_layers 4 \
  --d_model 512 \
  --d_ff 512 \
  --learning_rate 0.001 \
  --enc_in 358 \
  --dec_in 358 \
  --c_out 358 \
  --des Exp \
  --itr 1

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/PEMS/ \
  --data_path PEMS03.npz \
  --model_id PEMS03_96_48 \
  --model $model_name \
  --data PEMS \
  --features M \
  --seq_len 96 \
  --pred_len 48 \
  --e_layers 4 \
  --d_model 512 \
  --d_ff 512 \
  --learning_rate 0.001 \
  --enc_in 358 \
  --dec_in 358 \
  --c_out 358 \
  --des Exp \
  --itr 1

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/PEMS/ \
  --data_path PEMS03.npz \
  --model_id PEMS03_96_24 \
  --model $model_name \
  --data PEMS \
  --features M \
  --seq_len 96 \
  --pred_len 24 \
  --e_layers 4 \
  --d_model 512 \
  --d_ff 512 \
  --learning_rate 0.001 \
  --enc_in 358 \
  --dec_in 358 \
  --c_out 358 \
  --des Exp \
  --itr 1

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/PEMS/ \
  --data_path PEMS03.npz \
  --model_id PEMS03_96_12 \
  --model $model_name \
  --data PEMS \
  --features M \
  --seq_len 96 \
  --pred_len 12 \
  --e_layers 4 \
  --d_model 512 \
  --d_ff 512 \
  --learning_rate 0.001 \
  --enc_in 358 \
  --dec_in 358 \
  --c_out 358 \
  --des Exp \
  --itr 1
