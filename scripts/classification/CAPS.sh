# Generated from compare/recipes/tables.py by `python -m compare.scripts`: change the recipe there and regenerate.
# Plain bash: an edited copy runs as is, but regenerating overwrites edits made here.
#
# CAPS on classification: EthanolConcentration, FaceDetection, Handwriting, Heartbeat, JapaneseVowels, PEMS-SF, SelfRegulationSCP1, SelfRegulationSCP2, SpokenArabicDigits, UWaveGestureLibrary.
# TSLib's classification loop as its iTransformer blocks set it (data, batch, learning rate, epochs; its EthanolConcentration values on datasets TSLib runs no iTransformer on),
# with CAPS's own architecture as in its long-term recipe (--d_model 0: the official width rule, 4 heads, 3 layers, no dropout)
# and --caps_direction auto: bidirectional blocks on the window tasks, causal on forecasting (layers/CAPS_Attention.md).

export CUDA_VISIBLE_DEVICES=0

model_name=CAPS

# EthanolConcentration: the flags above.
python -u run.py \
  --task_name classification \
  --is_training 1 \
  --root_path ./dataset/EthanolConcentration/ \
  --model_id EthanolConcentration \
  --model $model_name \
  --data UEA \
  --e_layers 3 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10 \
  --enc_in 3 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

# FaceDetection: the flags above.
python -u run.py \
  --task_name classification \
  --is_training 1 \
  --root_path ./dataset/FaceDetection/ \
  --model_id FaceDetection \
  --model $model_name \
  --data UEA \
  --e_layers 3 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10 \
  --enc_in 3 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

# Handwriting: the flags above.
python -u run.py \
  --task_name classification \
  --is_training 1 \
  --root_path ./dataset/Handwriting/ \
  --model_id Handwriting \
  --model $model_name \
  --data UEA \
  --e_layers 3 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10 \
  --enc_in 3 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

# Heartbeat: the flags above.
python -u run.py \
  --task_name classification \
  --is_training 1 \
  --root_path ./dataset/Heartbeat/ \
  --model_id Heartbeat \
  --model $model_name \
  --data UEA \
  --e_layers 3 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10 \
  --enc_in 3 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

# JapaneseVowels: the flags above.
python -u run.py \
  --task_name classification \
  --is_training 1 \
  --root_path ./dataset/JapaneseVowels/ \
  --model_id JapaneseVowels \
  --model $model_name \
  --data UEA \
  --e_layers 3 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10 \
  --enc_in 3 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

# PEMS-SF: the flags above.
python -u run.py \
  --task_name classification \
  --is_training 1 \
  --root_path ./dataset/PEMS-SF/ \
  --model_id PEMS-SF \
  --model $model_name \
  --data UEA \
  --e_layers 3 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10 \
  --enc_in 3 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

# SelfRegulationSCP1: the flags above.
python -u run.py \
  --task_name classification \
  --is_training 1 \
  --root_path ./dataset/SelfRegulationSCP1/ \
  --model_id SelfRegulationSCP1 \
  --model $model_name \
  --data UEA \
  --e_layers 3 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10 \
  --enc_in 3 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

# SelfRegulationSCP2: the flags above.
python -u run.py \
  --task_name classification \
  --is_training 1 \
  --root_path ./dataset/SelfRegulationSCP2/ \
  --model_id SelfRegulationSCP2 \
  --model $model_name \
  --data UEA \
  --e_layers 3 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10 \
  --enc_in 3 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

# SpokenArabicDigits: the flags above.
python -u run.py \
  --task_name classification \
  --is_training 1 \
  --root_path ./dataset/SpokenArabicDigits/ \
  --model_id SpokenArabicDigits \
  --model $model_name \
  --data UEA \
  --e_layers 3 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10 \
  --enc_in 3 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto

# UWaveGestureLibrary: the flags above.
python -u run.py \
  --task_name classification \
  --is_training 1 \
  --root_path ./dataset/UWaveGestureLibrary/ \
  --model_id UWaveGestureLibrary \
  --model $model_name \
  --data UEA \
  --e_layers 3 \
  --batch_size 16 \
  --d_model 0 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10 \
  --enc_in 3 \
  --n_heads 4 \
  --dropout 0 \
  --caps_direction auto
