# Generated from compare/recipes/tables.py by `python -m compare.scripts`: change the recipe there and regenerate.
# Plain bash: an edited copy runs as is, but regenerating overwrites edits made here.
#
# Transformer on classification: EthanolConcentration, FaceDetection, Handwriting, Heartbeat, JapaneseVowels, PEMS-SF, SelfRegulationSCP1, SelfRegulationSCP2, SpokenArabicDigits, UWaveGestureLibrary.

export CUDA_VISIBLE_DEVICES=0

model_name=Transformer

# EthanolConcentration: TSLib's scripts/classification/Transformer.sh.
python -u run.py \
  --task_name classification \
  --is_training 1 \
  --root_path ./dataset/EthanolConcentration/ \
  --model_id EthanolConcentration \
  --model $model_name \
  --data UEA \
  --e_layers 3 \
  --batch_size 16 \
  --d_model 128 \
  --d_ff 256 \
  --top_k 3 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# FaceDetection: TSLib's scripts/classification/Transformer.sh.
python -u run.py \
  --task_name classification \
  --is_training 1 \
  --root_path ./dataset/FaceDetection/ \
  --model_id FaceDetection \
  --model $model_name \
  --data UEA \
  --e_layers 3 \
  --batch_size 16 \
  --d_model 128 \
  --d_ff 256 \
  --top_k 3 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# Handwriting: TSLib's scripts/classification/Transformer.sh.
python -u run.py \
  --task_name classification \
  --is_training 1 \
  --root_path ./dataset/Handwriting/ \
  --model_id Handwriting \
  --model $model_name \
  --data UEA \
  --e_layers 3 \
  --batch_size 16 \
  --d_model 128 \
  --d_ff 256 \
  --top_k 3 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# Heartbeat: TSLib's scripts/classification/Transformer.sh.
python -u run.py \
  --task_name classification \
  --is_training 1 \
  --root_path ./dataset/Heartbeat/ \
  --model_id Heartbeat \
  --model $model_name \
  --data UEA \
  --e_layers 3 \
  --batch_size 16 \
  --d_model 128 \
  --d_ff 256 \
  --top_k 3 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# JapaneseVowels: TSLib's scripts/classification/Transformer.sh.
python -u run.py \
  --task_name classification \
  --is_training 1 \
  --root_path ./dataset/JapaneseVowels/ \
  --model_id JapaneseVowels \
  --model $model_name \
  --data UEA \
  --e_layers 3 \
  --batch_size 16 \
  --d_model 128 \
  --d_ff 256 \
  --top_k 3 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# PEMS-SF: TSLib's scripts/classification/Transformer.sh.
python -u run.py \
  --task_name classification \
  --is_training 1 \
  --root_path ./dataset/PEMS-SF/ \
  --model_id PEMS-SF \
  --model $model_name \
  --data UEA \
  --e_layers 3 \
  --batch_size 16 \
  --d_model 128 \
  --d_ff 256 \
  --top_k 3 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# SelfRegulationSCP1: TSLib's scripts/classification/Transformer.sh.
python -u run.py \
  --task_name classification \
  --is_training 1 \
  --root_path ./dataset/SelfRegulationSCP1/ \
  --model_id SelfRegulationSCP1 \
  --model $model_name \
  --data UEA \
  --e_layers 3 \
  --batch_size 16 \
  --d_model 128 \
  --d_ff 256 \
  --top_k 3 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# SelfRegulationSCP2: TSLib's scripts/classification/Transformer.sh.
python -u run.py \
  --task_name classification \
  --is_training 1 \
  --root_path ./dataset/SelfRegulationSCP2/ \
  --model_id SelfRegulationSCP2 \
  --model $model_name \
  --data UEA \
  --e_layers 3 \
  --batch_size 16 \
  --d_model 128 \
  --d_ff 256 \
  --top_k 3 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# SpokenArabicDigits: TSLib's scripts/classification/Transformer.sh.
python -u run.py \
  --task_name classification \
  --is_training 1 \
  --root_path ./dataset/SpokenArabicDigits/ \
  --model_id SpokenArabicDigits \
  --model $model_name \
  --data UEA \
  --e_layers 3 \
  --batch_size 16 \
  --d_model 128 \
  --d_ff 256 \
  --top_k 3 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# UWaveGestureLibrary: TSLib's scripts/classification/Transformer.sh.
python -u run.py \
  --task_name classification \
  --is_training 1 \
  --root_path ./dataset/UWaveGestureLibrary/ \
  --model_id UWaveGestureLibrary \
  --model $model_name \
  --data UEA \
  --e_layers 3 \
  --batch_size 16 \
  --d_model 128 \
  --d_ff 256 \
  --top_k 3 \
  --des Exp \
  --itr 1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10
