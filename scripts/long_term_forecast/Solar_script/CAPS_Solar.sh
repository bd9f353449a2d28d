# Generated from compare/recipes/tables.py by `python -m compare.scripts`: change the recipe there and regenerate.
# Plain bash: an edited copy runs as is, but regenerating overwrites edits made here.
#
# CAPS on Solar (137 variates), horizons 96 192 336 720 (L = 96).
# CAPS recipe (the paper and the official caps.sh): AdamW, OneCycle
# stepped per optimiser step with no warm-up (pct_start 0) and no momentum cycling, bf16 autocast on
# CUDA (ignored on CPU), gradient clipping at norm 1 after unscaling, correct gradient accumulation
# (the effective batch is batch_size x grad_accum), 100 epochs, patience 12, seed 2026.
# Widths follow the official rule (--d_model 0); --time_emb_dim 4 uses the 4 hourly time features.

export CUDA_VISIBLE_DEVICES=0

model_name=CAPS

python -m data_provider.fetch Solar --root ./dataset || exit 1

# Solar: batch 8 x accumulation 4, channel dropout 0, weight decay 0, lr 0.0005.
python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/Solar/ \
  --data_path solar_AL.txt \
  --model_id Solar_96_96 \
  --model $model_name \
  --data Solar \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 96 \
  --enc_in 137 \
  --dec_in 137 \
  --c_out 137 \
  --d_model 0 \
  --n_heads 4 \
  --e_layers 3 \
  --dropout 0 \
  --time_emb_dim 4 \
  --random_channel_dropout 0 \
  --batch_size 8 \
  --grad_accum 4 \
  --learning_rate 0.0005 \
  --optimizer adamw \
  --weight_decay 0 \
  --lradj onecycle \
  --pct_start 0 \
  --max_grad_norm 1 \
  --train_epochs 100 \
  --patience 12 \
  --use_amp \
  --amp_dtype bf16 \
  --seed 2026 \
  --des Exp \
  --itr 1

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/Solar/ \
  --data_path solar_AL.txt \
  --model_id Solar_96_192 \
  --model $model_name \
  --data Solar \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 192 \
  --enc_in 137 \
  --dec_in 137 \
  --c_out 137 \
  --d_model 0 \
  --n_heads 4 \
  --e_layers 3 \
  --dropout 0 \
  --time_emb_dim 4 \
  --random_channel_dropout 0 \
  --batch_size 8 \
  --grad_accum 4 \
  --learning_rate 0.0005 \
  --optimizer adamw \
  --weight_decay 0 \
  --lradj onecycle \
  --pct_start 0 \
  --max_grad_norm 1 \
  --train_epochs 100 \
  --patience 12 \
  --use_amp \
  --amp_dtype bf16 \
  --seed 2026 \
  --des Exp \
  --itr 1

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/Solar/ \
  --data_path solar_AL.txt \
  --model_id Solar_96_336 \
  --model $model_name \
  --data Solar \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 336 \
  --enc_in 137 \
  --dec_in 137 \
  --c_out 137 \
  --d_model 0 \
  --n_heads 4 \
  --e_layers 3 \
  --dropout 0 \
  --time_emb_dim 4 \
  --random_channel_dropout 0 \
  --batch_size 8 \
  --grad_accum 4 \
  --learning_rate 0.0005 \
  --optimizer adamw \
  --weight_decay 0 \
  --lradj onecycle \
  --pct_start 0 \
  --max_grad_norm 1 \
  --train_epochs 100 \
  --patience 12 \
  --use_amp \
  --amp_dtype bf16 \
  --seed 2026 \
  --des Exp \
  --itr 1

python -u run.py \
  --task_name long_term_forecast \
  --is_training 1 \
  --root_path ./dataset/Solar/ \
  --data_path solar_AL.txt \
  --model_id Solar_96_720 \
  --model $model_name \
  --data Solar \
  --features M \
  --seq_len 96 \
  --label_len 0 \
  --pred_len 720 \
  --enc_in 137 \
  --dec_in 137 \
  --c_out 137 \
  --d_model 0 \
  --n_heads 4 \
  --e_layers 3 \
  --dropout 0 \
  --time_emb_dim 4 \
  --random_channel_dropout 0 \
  --batch_size 8 \
  --grad_accum 4 \
  --learning_rate 0.0005 \
  --optimizer adamw \
  --weight_decay 0 \
  --lradj onecycle \
  --pct_start 0 \
  --max_grad_norm 1 \
  --train_epochs 100 \
  --patience 12 \
  --use_amp \
  --amp_dtype bf16 \
  --seed 2026 \
  --des Exp \
  --itr 1
