# Generated from compare/recipes/tables.py by `python -m compare.scripts`: change the recipe there and regenerate.
# Plain bash: an edited copy runs as is, but regenerating overwrites edits made here.
#
# OLinear on ETTh1 (7 variates), horizons 96 192 336 720 (L = 96).
# OLinear recipe: the official repo's scripts (jackyue1994/OLinear, scripts/OLinear/), d_ff = d_model.
# Their --loss_mode L1 (an L1-style loss) is not implemented here: these runs train on --loss MSE.

export CUDA_VISIBLE_DEVICES=0

model_name=OLinear

# ETTh1: hyper-parameters from the official OLinear repo's scripts/OLinear/ETTh1_orthoLinear.sh; unlisted flags keep run.py defaults.
python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTh1.csv \
  --model_id ETTh1_96_96 \
  --model $model_name \
  --data ETTh1 \
  --features M \
  --seq_len 96 \
  --pred_len 96 \
  --enc_in 7 \
  --dec_in 7 \
  --c_out 7 \
  --des Exp \
  --embed_size 16 \
  --d_model 512 \
  --d_ff 512 \
  --batch_size 32 \
  --learning_rate 0.0005 \
  --itr 1 \
  --e_layers 2 \
  --train_epochs 30 \
  --patience 8 \
  --lradj type1 \
  --dropout 0.2

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTh1.csv \
  --model_id ETTh1_96_192 \
  --model $model_name \
  --data ETTh1 \
  --features M \
  --seq_len 96 \
  --pred_len 192 \
  --enc_in 7 \
  --dec_in 7 \
  --c_out 7 \
  --des Exp \
  --embed_size 16 \
  --d_model 512 \
  --d_ff 512 \
  --batch_size 32 \
  --learning_rate 0.0005 \
  --itr 1 \
  --e_layers 2 \
  --train_epochs 30 \
  --patience 8 \
  --lradj type1 \
  --dropout 0.2

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTh1.csv \
  --model_id ETTh1_96_336 \
  --model $model_name \
  --data ETTh1 \
  --features M \
  --seq_len 96 \
  --pred_len 336 \
  --enc_in 7 \
  --dec_in 7 \
  --c_out 7 \
  --des Exp \
  --embed_size 16 \
  --d_model 512 \
  --d_ff 512 \
  --batch_size 32 \
  --learning_rate 0.0005 \
  --itr 1 \
  --e_layers 2 \
  --train_epochs 30 \
  --patience 8 \
  --lradj type1 \
  --dropout 0.2

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/ETT-small/ \
  --data_path ETTh1.csv \
  --model_id ETTh1_96_720 \
  --model $model_name \
  --data ETTh1 \
  --features M \
  --seq_len 96 \
  --pred_len 720 \
  --enc_in 7 \
  --dec_in 7 \
  --c_out 7 \
  --des Exp \
  --embed_size 16 \
  --d_model 512 \
  --d_ff 512 \
  --batch_size 32 \
  --learning_rate 0.0001 \
  --itr 1 \
  --e_layers 2 \
  --train_epochs 30 \
  --patience 8 \
  --lradj type1 \
  --dropout 0.2
