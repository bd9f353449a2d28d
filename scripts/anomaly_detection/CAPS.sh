# Generated from compare/recipes/tables.py by `python -m compare.scripts`: change the recipe there and regenerate.
# Plain bash: an edited copy runs as is, but regenerating overwrites edits made here.
#
# CAPS on anomaly_detection: PSM, MSL, SMAP, SMD, SWAT.
# TSLib's anomaly_detection loop as its iTransformer blocks set it (data, batch, learning rate, epochs; its MSL values on datasets TSLib runs no iTransformer on),
# with CAPS's own architecture as in its long-term recipe (--d_model 0: the official width rule, 4 heads, 3 layers, no dropout)
# and --caps_direction auto: bidirectional blocks on the window tasks, causal on forecasting (layers/CAPS_Attention.md).

export CUDA_VISIBLE_DEVICES=0

model_name=CAPS

# PSM: the flags above.
python -u run.py \
  --task_name anomaly_detection \
  --is_training 1 \
  --root_path ./dataset/PSM \
  --model_id PSM \
  --model $model_name \
  --data PSM \
  --features M \
  --seq_len 100 \
  --pred_len 0 \
  --d_model 0 \
  --e_layers 3 \
  --enc_in 25 \
  --c_out 25 \
  --anomaly_ratio 1 \
  --batch_size 128 \
  --train_epochs 10 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

# MSL: the flags above.
python -u run.py \
  --task_name anomaly_detection \
  --is_training 1 \
  --root_path ./dataset/MSL \
  --model_id MSL \
  --model $model_name \
  --data MSL \
  --features M \
  --seq_len 100 \
  --pred_len 0 \
  --d_model 0 \
  --e_layers 3 \
  --enc_in 55 \
  --c_out 55 \
  --anomaly_ratio 1 \
  --batch_size 128 \
  --train_epochs 10 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

# SMAP: the flags above.
python -u run.py \
  --task_name anomaly_detection \
  --is_training 1 \
  --root_path ./dataset/SMAP \
  --model_id SMAP \
  --model $model_name \
  --data SMAP \
  --features M \
  --seq_len 100 \
  --pred_len 0 \
  --d_model 0 \
  --e_layers 3 \
  --enc_in 25 \
  --c_out 25 \
  --anomaly_ratio 1 \
  --batch_size 128 \
  --train_epochs 10 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

# SMD: the flags above.
python -u run.py \
  --task_name anomaly_detection \
  --is_training 1 \
  --root_path ./dataset/SMD \
  --model_id SMD \
  --model $model_name \
  --data SMD \
  --features M \
  --seq_len 100 \
  --pred_len 0 \
  --d_model 0 \
  --e_layers 3 \
  --enc_in 38 \
  --c_out 38 \
  --anomaly_ratio 1 \
  --batch_size 128 \
  --train_epochs 10 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

# SWAT: the flags above.
python -u run.py \
  --task_name anomaly_detection \
  --is_training 1 \
  --root_path ./dataset/SWaT \
  --model_id SWAT \
  --model $model_name \
  --data SWAT \
  --features M \
  --seq_len 100 \
  --pred_len 0 \
  --d_model 0 \
  --e_layers 3 \
  --enc_in 51 \
  --c_out 51 \
  --anomaly_ratio 1 \
  --batch_size 128 \
  --train_epochs 10 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto
