# Generated from compare/recipes/tables.py by `python -m compare.scripts`: change the recipe there and regenerate.
# Plain bash: an edited copy runs as is, but regenerating overwrites edits made here.
#
# MambaSingleLayer on classification: ArticularyWordRecognition, AtrialFibrillation, BasicMotions, CharacterTrajectories, Cricket, DuckDuckGeese, EigenWorms, Epilepsy, ERing, EthanolConcentration, FaceDetection, FingerMovements, HandMovementDirection, Handwriting, Heartbeat, InsectWingbeat, JapaneseVowels, Libras, LSST, MotorImagery, NATOPS, PEMS-SF, PenDigits, PhonemeSpectra, RacketSports, SelfRegulationSCP1, SelfRegulationSCP2, SpokenArabicDigits, StandWalkJump, UWaveGestureLibrary.
# TSLib's scripts/classification/MambaSL.sh tests the authors' trained checkpoints (--is_training 0
# --checkpoints ./checkpoints_best/MambaSL, downloaded by hand); these blocks train with its flags instead
# (--is_training 1: up to 100 epochs, patience 10). Its --use_gpu --gpu_type cuda --gpu 0 are left out.

export CUDA_VISIBLE_DEVICES=0

model_name=MambaSingleLayer

# ArticularyWordRecognition: TSLib's scripts/classification/MambaSL.sh.
python -u run.py \
  --task_name classification \
  --data UEA \
  --root_path ./dataset/ArticularyWordRecognition/ \
  --model $model_name \
  --model_id ArticularyWordRecognition \
  --d_model 128 \
  --d_ff 8 \
  --expand 1 \
  --d_conv 4 \
  --tv_dt 0 \
  --tv_B 0 \
  --tv_C 1 \
  --use_D 0 \
  --num_kernels 3 \
  --is_training 1 \
  --pred_len 0 \
  --label_len 0 \
  --batch_size 16 \
  --des gating4proposed \
  --itr 1 \
  --dropout 0.1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# AtrialFibrillation: TSLib's scripts/classification/MambaSL.sh.
python -u run.py \
  --task_name classification \
  --data UEA \
  --root_path ./dataset/AtrialFibrillation/ \
  --model $model_name \
  --model_id AtrialFibrillation \
  --d_model 32 \
  --d_ff 16 \
  --expand 1 \
  --d_conv 4 \
  --tv_dt 1 \
  --tv_B 0 \
  --tv_C 0 \
  --use_D 0 \
  --num_kernels 13 \
  --is_training 1 \
  --pred_len 0 \
  --label_len 0 \
  --batch_size 16 \
  --des gating4proposed \
  --itr 1 \
  --dropout 0.1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# BasicMotions: TSLib's scripts/classification/MambaSL.sh.
python -u run.py \
  --task_name classification \
  --data UEA \
  --root_path ./dataset/BasicMotions/ \
  --model $model_name \
  --model_id BasicMotions \
  --d_model 32 \
  --d_ff 1 \
  --expand 1 \
  --d_conv 4 \
  --tv_dt 0 \
  --tv_B 0 \
  --tv_C 0 \
  --use_D 0 \
  --num_kernels 3 \
  --is_training 1 \
  --pred_len 0 \
  --label_len 0 \
  --batch_size 16 \
  --des gating4proposed \
  --itr 1 \
  --dropout 0.1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# CharacterTrajectories: TSLib's scripts/classification/MambaSL.sh.
python -u run.py \
  --task_name classification \
  --data UEA \
  --root_path ./dataset/CharacterTrajectories/ \
  --model $model_name \
  --model_id CharacterTrajectories \
  --d_model 128 \
  --d_ff 1 \
  --expand 1 \
  --d_conv 4 \
  --tv_dt 1 \
  --tv_B 0 \
  --tv_C 0 \
  --use_D 0 \
  --num_kernels 4 \
  --is_training 1 \
  --pred_len 0 \
  --label_len 0 \
  --batch_size 16 \
  --des gating4proposed \
  --itr 1 \
  --dropout 0.1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# Cricket: TSLib's scripts/classification/MambaSL.sh.
python -u run.py \
  --task_name classification \
  --data UEA \
  --root_path ./dataset/Cricket/ \
  --model $model_name \
  --model_id Cricket \
  --d_model 32 \
  --d_ff 4 \
  --expand 1 \
  --d_conv 4 \
  --tv_dt 0 \
  --tv_B 1 \
  --tv_C 0 \
  --use_D 0 \
  --num_kernels 24 \
  --is_training 1 \
  --pred_len 0 \
  --label_len 0 \
  --batch_size 16 \
  --des gating4proposed \
  --itr 1 \
  --dropout 0.1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# DuckDuckGeese: TSLib's scripts/classification/MambaSL.sh.
python -u run.py \
  --task_name classification \
  --data UEA \
  --root_path ./dataset/DuckDuckGeese/ \
  --model $model_name \
  --model_id DuckDuckGeese \
  --d_model 1024 \
  --d_ff 2 \
  --expand 1 \
  --d_conv 4 \
  --tv_dt 0 \
  --tv_B 0 \
  --tv_C 1 \
  --use_D 0 \
  --num_kernels 6 \
  --is_training 1 \
  --pred_len 0 \
  --label_len 0 \
  --batch_size 16 \
  --des gating4proposed \
  --itr 1 \
  --dropout 0.1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# EigenWorms: TSLib's scripts/classification/MambaSL.sh.
python -u run.py \
  --task_name classification \
  --data UEA \
  --root_path ./dataset/EigenWorms/ \
  --model $model_name \
  --model_id EigenWorms \
  --d_model 32 \
  --d_ff 1 \
  --expand 1 \
  --d_conv 4 \
  --tv_dt 1 \
  --tv_B 1 \
  --tv_C 0 \
  --use_D 0 \
  --num_kernels 360 \
  --is_training 1 \
  --pred_len 0 \
  --label_len 0 \
  --batch_size 4 \
  --des gating4proposed \
  --itr 1 \
  --dropout 0.1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# Epilepsy: TSLib's scripts/classification/MambaSL.sh.
python -u run.py \
  --task_name classification \
  --data UEA \
  --root_path ./dataset/Epilepsy/ \
  --model $model_name \
  --model_id Epilepsy \
  --d_model 32 \
  --d_ff 1 \
  --expand 1 \
  --d_conv 4 \
  --tv_dt 1 \
  --tv_B 1 \
  --tv_C 0 \
  --use_D 0 \
  --num_kernels 5 \
  --is_training 1 \
  --pred_len 0 \
  --label_len 0 \
  --batch_size 16 \
  --des gating4proposed \
  --itr 1 \
  --dropout 0.1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# ERing: TSLib's scripts/classification/MambaSL.sh.
python -u run.py \
  --task_name classification \
  --data UEA \
  --root_path ./dataset/ERing/ \
  --model $model_name \
  --model_id ERing \
  --d_model 128 \
  --d_ff 8 \
  --expand 1 \
  --d_conv 4 \
  --tv_dt 1 \
  --tv_B 0 \
  --tv_C 1 \
  --use_D 0 \
  --num_kernels 3 \
  --is_training 1 \
  --pred_len 0 \
  --label_len 0 \
  --batch_size 16 \
  --des gating4proposed \
  --itr 1 \
  --dropout 0.1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# EthanolConcentration: TSLib's scripts/classification/MambaSL.sh.
python -u run.py \
  --task_name classification \
  --data UEA \
  --root_path ./dataset/EthanolConcentration/ \
  --model $model_name \
  --model_id EthanolConcentration \
  --d_model 512 \
  --d_ff 4 \
  --expand 1 \
  --d_conv 4 \
  --tv_dt 0 \
  --tv_B 0 \
  --tv_C 0 \
  --use_D 0 \
  --num_kernels 36 \
  --is_training 1 \
  --pred_len 0 \
  --label_len 0 \
  --batch_size 16 \
  --des gating4proposed \
  --itr 1 \
  --dropout 0.1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# FaceDetection: TSLib's scripts/classification/MambaSL.sh.
python -u run.py \
  --task_name classification \
  --data UEA \
  --root_path ./dataset/FaceDetection/ \
  --model $model_name \
  --model_id FaceDetection \
  --d_model 256 \
  --d_ff 16 \
  --expand 1 \
  --d_conv 4 \
  --tv_dt 1 \
  --tv_B 0 \
  --tv_C 1 \
  --use_D 0 \
  --num_kernels 3 \
  --is_training 1 \
  --pred_len 0 \
  --label_len 0 \
  --batch_size 16 \
  --des gating4proposed \
  --itr 1 \
  --dropout 0.1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# FingerMovements: TSLib's scripts/classification/MambaSL.sh.
python -u run.py \
  --task_name classification \
  --data UEA \
  --root_path ./dataset/FingerMovements/ \
  --model $model_name \
  --model_id FingerMovements \
  --d_model 32 \
  --d_ff 1 \
  --expand 1 \
  --d_conv 4 \
  --tv_dt 0 \
  --tv_B 1 \
  --tv_C 1 \
  --use_D 0 \
  --num_kernels 3 \
  --is_training 1 \
  --pred_len 0 \
  --label_len 0 \
  --batch_size 16 \
  --des gating4proposed \
  --itr 1 \
  --dropout 0.1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# HandMovementDirection: TSLib's scripts/classification/MambaSL.sh.
python -u run.py \
  --task_name classification \
  --data UEA \
  --root_path ./dataset/HandMovementDirection/ \
  --model $model_name \
  --model_id HandMovementDirection \
  --d_model 256 \
  --d_ff 16 \
  --expand 1 \
  --d_conv 4 \
  --tv_dt 1 \
  --tv_B 0 \
  --tv_C 1 \
  --use_D 0 \
  --num_kernels 8 \
  --is_training 1 \
  --pred_len 0 \
  --label_len 0 \
  --batch_size 16 \
  --des gating4proposed \
  --itr 1 \
  --dropout 0.1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# Handwriting: TSLib's scripts/classification/MambaSL.sh.
python -u run.py \
  --task_name classification \
  --data UEA \
  --root_path ./dataset/Handwriting/ \
  --model $model_name \
  --model_id Handwriting \
  --d_model 1024 \
  --d_ff 4 \
  --expand 1 \
  --d_conv 4 \
  --tv_dt 1 \
  --tv_B 0 \
  --tv_C 1 \
  --use_D 0 \
  --num_kernels 4 \
  --is_training 1 \
  --pred_len 0 \
  --label_len 0 \
  --batch_size 16 \
  --des gating4proposed \
  --itr 1 \
  --dropout 0.1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# Heartbeat: TSLib's scripts/classification/MambaSL.sh.
python -u run.py \
  --task_name classification \
  --data UEA \
  --root_path ./dataset/Heartbeat/ \
  --model $model_name \
  --model_id Heartbeat \
  --d_model 64 \
  --d_ff 16 \
  --expand 1 \
  --d_conv 4 \
  --tv_dt 0 \
  --tv_B 0 \
  --tv_C 0 \
  --use_D 0 \
  --num_kernels 9 \
  --is_training 1 \
  --pred_len 0 \
  --label_len 0 \
  --batch_size 16 \
  --des gating4proposed \
  --itr 1 \
  --dropout 0.1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# InsectWingbeat: TSLib's scripts/classification/MambaSL.sh.
python -u run.py \
  --task_name classification \
  --data UEA \
  --root_path ./dataset/InsectWingbeat/ \
  --model $model_name \
  --model_id InsectWingbeat \
  --d_model 1024 \
  --d_ff 8 \
  --expand 1 \
  --d_conv 4 \
  --tv_dt 0 \
  --tv_B 0 \
  --tv_C 0 \
  --use_D 0 \
  --num_kernels 3 \
  --is_training 1 \
  --pred_len 0 \
  --label_len 0 \
  --batch_size 16 \
  --des gating4proposed \
  --itr 1 \
  --dropout 0.1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# JapaneseVowels: TSLib's scripts/classification/MambaSL.sh.
python -u run.py \
  --task_name classification \
  --data UEA \
  --root_path ./dataset/JapaneseVowels/ \
  --model $model_name \
  --model_id JapaneseVowels \
  --d_model 128 \
  --d_ff 8 \
  --expand 1 \
  --d_conv 4 \
  --tv_dt 1 \
  --tv_B 1 \
  --tv_C 0 \
  --use_D 0 \
  --num_kernels 3 \
  --is_training 1 \
  --pred_len 0 \
  --label_len 0 \
  --batch_size 16 \
  --des gating4proposed \
  --itr 1 \
  --dropout 0.1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# Libras: TSLib's scripts/classification/MambaSL.sh.
python -u run.py \
  --task_name classification \
  --data UEA \
  --root_path ./dataset/Libras/ \
  --model $model_name \
  --model_id Libras \
  --d_model 1024 \
  --d_ff 4 \
  --expand 1 \
  --d_conv 4 \
  --tv_dt 1 \
  --tv_B 1 \
  --tv_C 1 \
  --use_D 0 \
  --num_kernels 3 \
  --is_training 1 \
  --pred_len 0 \
  --label_len 0 \
  --batch_size 16 \
  --des gating4proposed \
  --itr 1 \
  --dropout 0.1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# LSST: TSLib's scripts/classification/MambaSL.sh.
python -u run.py \
  --task_name classification \
  --data UEA \
  --root_path ./dataset/LSST/ \
  --model $model_name \
  --model_id LSST \
  --d_model 1024 \
  --d_ff 4 \
  --expand 1 \
  --d_conv 4 \
  --tv_dt 1 \
  --tv_B 1 \
  --tv_C 1 \
  --use_D 0 \
  --num_kernels 3 \
  --is_training 1 \
  --pred_len 0 \
  --label_len 0 \
  --batch_size 16 \
  --des gating4proposed \
  --itr 1 \
  --dropout 0.1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# MotorImagery: TSLib's scripts/classification/MambaSL.sh.
python -u run.py \
  --task_name classification \
  --data UEA \
  --root_path ./dataset/MotorImagery/ \
  --model $model_name \
  --model_id MotorImagery \
  --d_model 32 \
  --d_ff 8 \
  --expand 1 \
  --d_conv 4 \
  --tv_dt 0 \
  --tv_B 0 \
  --tv_C 0 \
  --use_D 0 \
  --num_kernels 60 \
  --is_training 1 \
  --pred_len 0 \
  --label_len 0 \
  --batch_size 16 \
  --des gating4proposed \
  --itr 1 \
  --dropout 0.1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# NATOPS: TSLib's scripts/classification/MambaSL.sh.
python -u run.py \
  --task_name classification \
  --data UEA \
  --root_path ./dataset/NATOPS/ \
  --model $model_name \
  --model_id NATOPS \
  --d_model 512 \
  --d_ff 2 \
  --expand 1 \
  --d_conv 4 \
  --tv_dt 0 \
  --tv_B 1 \
  --tv_C 0 \
  --use_D 0 \
  --num_kernels 3 \
  --is_training 1 \
  --pred_len 0 \
  --label_len 0 \
  --batch_size 16 \
  --des gating4proposed \
  --itr 1 \
  --dropout 0.1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# PEMS-SF: TSLib's scripts/classification/MambaSL.sh.
python -u run.py \
  --task_name classification \
  --data UEA \
  --root_path ./dataset/PEMS-SF/ \
  --model $model_name \
  --model_id PEMS-SF \
  --d_model 512 \
  --d_ff 1 \
  --expand 1 \
  --d_conv 4 \
  --tv_dt 1 \
  --tv_B 1 \
  --tv_C 0 \
  --use_D 0 \
  --num_kernels 3 \
  --is_training 1 \
  --pred_len 0 \
  --label_len 0 \
  --batch_size 16 \
  --des gating4proposed \
  --itr 1 \
  --dropout 0.1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# PenDigits: TSLib's scripts/classification/MambaSL.sh.
python -u run.py \
  --task_name classification \
  --data UEA \
  --root_path ./dataset/PenDigits/ \
  --model $model_name \
  --model_id PenDigits \
  --d_model 64 \
  --d_ff 1 \
  --expand 1 \
  --d_conv 4 \
  --tv_dt 0 \
  --tv_B 1 \
  --tv_C 1 \
  --use_D 0 \
  --num_kernels 3 \
  --is_training 1 \
  --pred_len 0 \
  --label_len 0 \
  --batch_size 16 \
  --des gating4proposed \
  --itr 1 \
  --dropout 0.1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# PhonemeSpectra: TSLib's scripts/classification/MambaSL.sh.
python -u run.py \
  --task_name classification \
  --data UEA \
  --root_path ./dataset/PhonemeSpectra/ \
  --model $model_name \
  --model_id PhonemeSpectra \
  --d_model 256 \
  --d_ff 4 \
  --expand 1 \
  --d_conv 4 \
  --tv_dt 1 \
  --tv_B 1 \
  --tv_C 0 \
  --use_D 0 \
  --num_kernels 5 \
  --is_training 1 \
  --pred_len 0 \
  --label_len 0 \
  --batch_size 16 \
  --des gating4proposed \
  --itr 1 \
  --dropout 0.1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# RacketSports: TSLib's scripts/classification/MambaSL.sh.
python -u run.py \
  --task_name classification \
  --data UEA \
  --root_path ./dataset/RacketSports/ \
  --model $model_name \
  --model_id RacketSports \
  --d_model 1024 \
  --d_ff 4 \
  --expand 1 \
  --d_conv 4 \
  --tv_dt 1 \
  --tv_B 0 \
  --tv_C 1 \
  --use_D 0 \
  --num_kernels 3 \
  --is_training 1 \
  --pred_len 0 \
  --label_len 0 \
  --batch_size 16 \
  --des gating4proposed \
  --itr 1 \
  --dropout 0.1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# SelfRegulationSCP1: TSLib's scripts/classification/MambaSL.sh.
python -u run.py \
  --task_name classification \
  --data UEA \
  --root_path ./dataset/SelfRegulationSCP1/ \
  --model $model_name \
  --model_id SelfRegulationSCP1 \
  --d_model 256 \
  --d_ff 16 \
  --expand 1 \
  --d_conv 4 \
  --tv_dt 1 \
  --tv_B 0 \
  --tv_C 1 \
  --use_D 0 \
  --num_kernels 18 \
  --is_training 1 \
  --pred_len 0 \
  --label_len 0 \
  --batch_size 16 \
  --des gating4proposed \
  --itr 1 \
  --dropout 0.1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# SelfRegulationSCP2: TSLib's scripts/classification/MambaSL.sh.
python -u run.py \
  --task_name classification \
  --data UEA \
  --root_path ./dataset/SelfRegulationSCP2/ \
  --model $model_name \
  --model_id SelfRegulationSCP2 \
  --d_model 256 \
  --d_ff 16 \
  --expand 1 \
  --d_conv 4 \
  --tv_dt 1 \
  --tv_B 1 \
  --tv_C 1 \
  --use_D 0 \
  --num_kernels 24 \
  --is_training 1 \
  --pred_len 0 \
  --label_len 0 \
  --batch_size 16 \
  --des gating4proposed \
  --itr 1 \
  --dropout 0.1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# SpokenArabicDigits: TSLib's scripts/classification/MambaSL.sh.
python -u run.py \
  --task_name classification \
  --data UEA \
  --root_path ./dataset/SpokenArabicDigits/ \
  --model $model_name \
  --model_id SpokenArabicDigits \
  --d_model 1024 \
  --d_ff 8 \
  --expand 1 \
  --d_conv 4 \
  --tv_dt 0 \
  --tv_B 1 \
  --tv_C 0 \
  --use_D 0 \
  --num_kernels 3 \
  --is_training 1 \
  --pred_len 0 \
  --label_len 0 \
  --batch_size 16 \
  --des gating4proposed \
  --itr 1 \
  --dropout 0.1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# StandWalkJump: TSLib's scripts/classification/MambaSL.sh.
python -u run.py \
  --task_name classification \
  --data UEA \
  --root_path ./dataset/StandWalkJump/ \
  --model $model_name \
  --model_id StandWalkJump \
  --d_model 32 \
  --d_ff 1 \
  --expand 1 \
  --d_conv 4 \
  --tv_dt 1 \
  --tv_B 0 \
  --tv_C 0 \
  --use_D 0 \
  --num_kernels 50 \
  --is_training 1 \
  --pred_len 0 \
  --label_len 0 \
  --batch_size 16 \
  --des gating4proposed \
  --itr 1 \
  --dropout 0.1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10

# UWaveGestureLibrary: TSLib's scripts/classification/MambaSL.sh.
python -u run.py \
  --task_name classification \
  --data UEA \
  --root_path ./dataset/UWaveGestureLibrary/ \
  --model $model_name \
  --model_id UWaveGestureLibrary \
  --d_model 1024 \
  --d_ff 2 \
  --expand 1 \
  --d_conv 4 \
  --tv_dt 0 \
  --tv_B 0 \
  --tv_C 1 \
  --use_D 0 \
  --num_kernels 7 \
  --is_training 1 \
  --pred_len 0 \
  --label_len 0 \
  --batch_size 16 \
  --des gating4proposed \
  --itr 1 \
  --dropout 0.1 \
  --learning_rate 0.001 \
  --train_epochs 100 \
  --patience 10
