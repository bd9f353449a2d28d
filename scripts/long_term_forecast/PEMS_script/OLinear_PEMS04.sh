# Generated from compare/recipes/tables.py by `python -m compare.scripts`: change the recipe there and regenerate.
# Plain bash: an edited copy runs as is, but regenerating overwrites edits made here.
#
# OLinear on PEMS04 (307 variates), horizons 96 48 24 12 (L = 96).
# OLinear recipe: the official repo's scripts (jackyue1994/OLinear, scripts/OLinear/), d_ff = d_model.
# Their --loss_mode L1 (an L1-style loss) is not implemented here: these runs train on --loss MSE.

export CUDA_VISIBLE_DEVICES=0

model_name=OLinear

# PEMS04: hyper-parameters from the official OLinear repo's scripts/OLinear/PEMS04_orthoLinear.sh; unlisted flags keep run.py defaults.
# PEMS horizons in the official loop order; the paper reports 12-96.
python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/PEMS/ \
  --data_path PEMS04.npz \
  --model_id PEMS04_96_96 \
  --model $model_name \
  --data PEMS \
  --features M \
  --seq_len 96 \
  --pred_len 96 \
  --enc_in 307 \
  --dec_in 307 \
  --c_out 307 \
  --des Exp \
  --embed_size 16 \
  --d_model 512 \
  --d_ff 512 \
  --batch_size 32 \
  --learning_rate 0.0005 \
  --itr 1 \
  --e_layers 3 \
  --train_epochs 40 \
  --patience 10 \
  --lradj cosine \
  --dropout 0.0

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/PEMS/ \
  --data_path PEMS04.npz \
  --model_id PEMS04_96_48 \
  --model $model_name \
  --data PEMS \
  --features M \
  --seq_len 96 \
  --pred_len 48 \
  --enc_in 307 \
  --dec_in 307 \
  --c_out 307 \
  --des Exp \
  --embed_size 16 \
  --d_model 512 \
  --d_ff 512 \
  --batch_size 32 \
  --learning_rate 0.0005 \
  --itr 1 \
  --e_layers 3 \
  --train_epochs 40 \
  --patience 10 \
  --lradj cosine \
  --dropout 0.0

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/PEMS/ \
  --data_path PEMS04.npz \
  --model_id PEMS04_96_24 \
  --model $model_name \
  --data PEMS \
  --features M \
  --seq_len 96 \
  --pred_len 24 \
  --enc_in 307 \
  --dec_in 307 \
  --c_out 307 \
  --des Exp \
  --embed_size 16 \
  --d_model 512 \
  --d_ff 512 \
  --batch_size 32 \
  --learning_rate 0.0005 \
  --itr 1 \
  --e_layers 3 \
  --train_epochs 40 \
  --patience 10 \
  --lradj cosine \
  --dropout 0.0

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/PEMS/ \
  --data_path PEMS04.npz \
  --model_id PEMS04_96_12 \
  --model $model_name \
  --data PEMS \
  --features M \
  --seq_len 96 \
  --pred_len 12 \
  --enc_in 307 \
  --dec_in 307 \
  --c_out 307 \
  --des Exp \
  --embed_size 16 \
  --d_model 512 \
  --d_ff 512 \
  --batch_size 32 \
  --learning_rate 0.0005 \
  --itr 1 \
  --e_layers 3 \
  --train_epochs 40 \
  --patience 10 \
  --lradj cosine \
  --dropout 0.0
