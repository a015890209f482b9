<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="ja_JP">
<context>
    <name>QObject</name>
    <message>
        <location filename="../ui/preferences_dialog.cpp" line="+52"/>
        <source>One per line</source>
        <translation>1行に1つ</translation>
    </message>
</context>
<context>
    <name>kiln::app::EngineBridge</name>
    <message>
        <location filename="../app/bridge/engine_bridge.cpp" line="+120"/>
        <source>(no prompt)</source>
        <translation>（プロンプトなし）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 · image %2 of %3 · seed %4</source>
        <translation>%1 · %3 枚中 %2 枚目 · シード %4</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>%1 · %2 images · seed %3</source>
        <translation>%1 · %2 枚 · シード %3</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 · seed %2</source>
        <translation>%1 · シード %2</translation>
    </message>
    <message>
        <location line="+41"/>
        <source>Started %1</source>
        <translation>開始：%1</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Refused %1: %2</source>
        <translation>拒否：%1：%2</translation>
    </message>
    <message numerus="yes">
        <location line="+19"/>
        <source>Skip: %1 finishes, %n later image(s) of its batch dropped</source>
        <translation>
            <numerusform>スキップ: %1 は最後まで描き、バッチの残り %n 枚は取りやめます</numerusform>
        </translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Removed %1 from the queue</source>
        <translation>%1 をキューから削除しました</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Removed %1 waiting requests</source>
        <translation>待機中の %1 件を削除しました</translation>
    </message>
    <message>
        <location line="+97"/>
        <source>Finished %1</source>
        <translation>完了：%1</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>the workflow ran but made no picture: give it a SaveImage or PreviewImage node</source>
        <translation>ワークフローは実行されましたが画像ができませんでした。SaveImage か PreviewImage ノードを加えてください</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Saved %1</source>
        <translation>保存しました：%1</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Failed %1: %2</source>
        <translation>失敗：%1：%2</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Stopped %1 (%2)</source>
        <translation>中断：%1（%2）</translation>
    </message>
    <message>
        <location line="+31"/>
        <source>There is no image to save yet.</source>
        <translation>保存する画像はまだありません。</translation>
    </message>
</context>
<context>
    <name>kiln::app::MemoryPresets</name>
    <message>
        <location filename="../app/settings/memory_presets.cpp" line="+49"/>
        <source>CPU only</source>
        <translation>CPUのみ</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>GPU with up to 6 GB</source>
        <translation>6 GBまでのGPU</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>GPU with 6 to 12 GB</source>
        <translation>6～12 GBのGPU</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>GPU with more than 12 GB</source>
        <translation>12 GBを超えるGPU</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Everything computes in host memory; nothing is moved between memories.</source>
        <translation>すべてホストメモリで計算し、メモリ間の移動は行いません。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Weights stream to the GPU in groups as they are needed, text encoders layer by layer, and the VAE always works in tiles. Slower, but large models fit.</source>
        <translation>重みは必要に応じてグループ単位でGPUへ転送され、テキストエンコーダーは層ごとに、VAEは常にタイル単位で動作します。遅くなりますが、大きなモデルも収まります。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>The denoiser keeps on the GPU what fits and streams the rest in groups (FLUX.1&apos;s transformer fits this way); text encoders stream layer by layer (T5-XXL); the VAE moves to the GPU whole while it runs and works in tiles when a picture would not fit.</source>
        <translation>デノイザーは収まる分を GPU に置き、残りをグループ単位で転送します（FLUX.1 のトランスフォーマーもこれで収まります）。テキストエンコーダーは層ごとに転送し（T5-XXL）、VAE は実行中だけ丸ごと GPU に移り、画像が収まらないときはタイルで処理します。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Every model stays on the GPU: the fastest, for cards with room for them.</source>
        <translation>すべてのモデルがGPUに常駐します。十分なメモリを持つカード向けの最速設定です。</translation>
    </message>
    <message>
        <location line="+87"/>
        <source>Kiln has no setting %1</source>
        <translation>Kilnに設定 %1 はありません</translation>
    </message>
</context>
<context>
    <name>kiln::app::ModelList</name>
    <message>
        <location filename="../app/settings/model_list.cpp" line="+82"/>
        <source>a folder without model_index.json</source>
        <translation>model_index.json のないフォルダー</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>it cannot be read</source>
        <translation>読み込めません</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>it is too short to be a safetensors file</source>
        <translation>safetensors ファイルとしては短すぎます</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>it is not a safetensors file (its header length does not fit the file)</source>
        <translation>safetensors ファイルではありません (ヘッダーの長さがファイルに合いません)</translation>
    </message>
    <message>
        <location line="+7"/>
        <location line="+9"/>
        <source>its header is not safetensors JSON</source>
        <translation>ヘッダーが safetensors の JSON ではありません</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>it is cut short: tensor %1 lies beyond its end (an unfinished download?)</source>
        <translation>途中で切れています: テンソル %1 がファイルの終わりより先にあります (ダウンロードが未完了?)</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>it holds no tensors</source>
        <translation>テンソルが含まれていません</translation>
    </message>
</context>
<context>
    <name>kiln::app::Settings</name>
    <message>
        <location filename="../app/settings/settings.cpp" line="+62"/>
        <source>Folders searched for checkpoints, LoRAs and VAEs, including ComfyUI and A1111 model trees</source>
        <translation>チェックポイント、LoRA、VAE を探すフォルダ（ComfyUI と A1111 のモデルフォルダを含む）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Where results are saved</source>
        <translation>結果の保存先</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Names of saved files: {date}, {time}, {seed}, {model} are filled in</source>
        <translation>保存するファイル名：{date}、{time}、{seed}、{model} が置き換えられます</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Show the first-start assistant (model folders, memory preset) when Kiln starts</source>
        <translation>Kiln の起動時に初回セットアップ（モデルフォルダー、メモリプリセット）を表示する</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Where to compute: cpu, cuda:N (takes effect when Kiln starts)</source>
        <translation>計算するデバイス：cpu、cuda:N（Kiln の次回起動時に有効）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>How weights move between host and device memory</source>
        <translation>重みをホストメモリとデバイスメモリの間でどう移すか</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Offload mode of the text encoders</source>
        <translation>テキストエンコーダのオフロード方式</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Offload mode of the UNet</source>
        <translation>UNet のオフロード方式</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Offload mode of the VAE</source>
        <translation>VAE のオフロード方式</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Blocks moved together in group-block mode</source>
        <translation>group-block 方式で一緒に移すブロック数</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Prefetch the next group while the current one runs</source>
        <translation>現在のグループの実行中に次のグループを先読みする</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Record tensors on the side stream (needs streams)</source>
        <translation>サイドストリームでテンソルを記録する（ストリームが必要）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Offloaded weights in pinned host memory</source>
        <translation>オフロードした重みをピン留めしたホストメモリに置く</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Host memory pinning leaves free</source>
        <translation>ピン留めで残しておくホストメモリ</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Components never offloaded</source>
        <translation>オフロードしないコンポーネント</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Components always offloaded</source>
        <translation>常にオフロードするコンポーネント</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>VAE decode and encode in tiles</source>
        <translation>VAE のデコードとエンコードをタイルで行う</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>VAE tile size in pixels (0: the largest that fits)</source>
        <translation>VAE のタイルサイズ（ピクセル、0：収まる最大）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Overlap of VAE tiles in pixels</source>
        <translation>VAE タイルの重なり（ピクセル）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Device memory kept free for work beside the weights</source>
        <translation>重みとは別に作業用に空けておくデバイスメモリ</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>How LoRAs reach the weights</source>
        <translation>LoRA を重みに適用する方法</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Language of the interface</source>
        <translation>表示言語</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Colour theme</source>
        <translation>配色テーマ</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Interpolate enlarged pictures instead of showing their pixels as blocks</source>
        <translation>拡大した画像のピクセルをブロックで表示せず、補間して表示します</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>The generate panel&apos;s workflow and values when Kiln last closed</source>
        <translation>Kiln を前回閉じたときの生成パネルのワークフローと値</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Where that workflow came from</source>
        <translation>そのワークフローの出所</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Whether the generate panel draws a new seed for every Generate</source>
        <translation>生成のたびに生成パネルが新しいシードを選ぶかどうか</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Model folders</source>
        <translation>モデルフォルダ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Output folder</source>
        <translation>出力フォルダ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>File names</source>
        <translation>ファイル名</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>First-start assistant</source>
        <translation>初回セットアップ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Device</source>
        <translation>デバイス</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Offload</source>
        <translation>オフロード</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Text encoders</source>
        <translation>テキストエンコーダ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>UNet</source>
        <translation>UNet</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>VAE</source>
        <translation>VAE</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Blocks per group</source>
        <translation>グループあたりのブロック数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Streams</source>
        <translation>ストリーム</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Record stream</source>
        <translation>ストリームを記録</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Pinned memory</source>
        <translation>ピン留めメモリ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Pinned memory reserve</source>
        <translation>ピン留めで残すメモリ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Never offload</source>
        <translation>オフロードしない</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Always offload</source>
        <translation>常にオフロード</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>VAE tiling</source>
        <translation>VAE タイル処理</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Tile size</source>
        <translation>タイルサイズ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Tile overlap</source>
        <translation>タイルの重なり</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Working memory reserve</source>
        <translation>作業用メモリの予約</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Apply mode</source>
        <translation>適用方法</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Language</source>
        <translation>言語</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Theme</source>
        <translation>テーマ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Smooth scaling</source>
        <translation>なめらかな拡大縮小</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>System language</source>
        <translation>システムの言語</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>As the system</source>
        <translation>システムと同じ</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Light</source>
        <translation>ライト</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Dark</source>
        <translation>ダーク</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>%1 must be true or false</source>
        <translation>%1 は true か false でなければなりません</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 must be a whole number, not &apos;%2&apos;</source>
        <translation>%1 は整数でなければなりません（&apos;%2&apos; ではなく）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 must be between %2 and %3, not %4</source>
        <translation>%1 は %2 から %3 の間でなければなりません（%4 ではなく）</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>%1 must be a size like 2G or 512MiB, not &apos;%2&apos;</source>
        <translation>%1 は 2G や 512MiB のようなサイズでなければなりません（&apos;%2&apos; ではなく）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 must be between %2 and %3</source>
        <translation>%1 は %2 から %3 の間でなければなりません</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>%1 must be one of %2, not &apos;%3&apos;</source>
        <translation>%1 は %2 のいずれかでなければなりません（&apos;%3&apos; ではなく）</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>%1 must be cpu, cuda:N or sim:SIZE, not &apos;%2&apos;</source>
        <translation>%1 は cpu、cuda:N、sim:SIZE のいずれかでなければなりません（&apos;%2&apos; ではなく）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 must be a list of names</source>
        <translation>%1 は名前のリストでなければなりません</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 must not be empty</source>
        <translation>%1 は空にできません</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 is a file name, not a path: &apos;%2&apos; has a folder separator</source>
        <translation>%1 はパスではなくファイル名です：&apos;%2&apos; にフォルダ区切りが含まれています</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 has an unknown type</source>
        <translation>%1 の型が不明です</translation>
    </message>
    <message>
        <location line="+28"/>
        <source>Kiln has no setting %1</source>
        <translation>設定 %1 はありません</translation>
    </message>
</context>
<context>
    <name>kiln::app::Workflow</name>
    <message>
        <location filename="../app/workflows/node_texts.cpp" line="+52"/>
        <location filename="../app/workflows/template_workflow.cpp" line="+28"/>
        <source>Model</source>
        <translation>モデル</translation>
    </message>
    <message>
        <location filename="../app/workflows/template_workflow.cpp" line="+2"/>
        <source>Prompt</source>
        <translation>プロンプト</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Negative prompt</source>
        <translation>ネガティブプロンプト</translation>
    </message>
    <message>
        <location filename="../app/workflows/node_texts.cpp" line="-19"/>
        <location filename="../app/workflows/template_workflow.cpp" line="+10"/>
        <source>Guidance</source>
        <translation>ガイダンス</translation>
    </message>
    <message>
        <location line="+30"/>
        <location filename="../app/workflows/template_workflow.cpp" line="-8"/>
        <source>Sampler</source>
        <translation>サンプラー</translation>
    </message>
    <message>
        <location line="+7"/>
        <location filename="../app/workflows/template_workflow.cpp" line="+2"/>
        <source>Seed</source>
        <translation>シード</translation>
    </message>
    <message>
        <location line="+2"/>
        <location filename="../app/workflows/template_workflow.cpp" line="+2"/>
        <source>Steps</source>
        <translation>ステップ数</translation>
    </message>
    <message>
        <location line="-55"/>
        <location filename="../app/workflows/template_workflow.cpp" line="+2"/>
        <source>CFG scale</source>
        <translation>CFG スケール</translation>
    </message>
    <message>
        <location line="-3"/>
        <source>Aesthetic score</source>
        <translation>美的スコア</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Base shift</source>
        <translation>基本シフト</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Batch size</source>
        <translation>バッチサイズ</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>CLIP-L text</source>
        <translation>CLIP-L テキスト</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Checkpoint</source>
        <translation>チェックポイント</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Clip skip</source>
        <translation>CLIP スキップ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Compute precision</source>
        <translation>計算精度</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Conditioning</source>
        <translation>コンディショニング</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Crop left</source>
        <translation>左の切り取り</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Crop top</source>
        <translation>上の切り取り</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Denoise</source>
        <translation>ノイズ除去</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Empty latent</source>
        <translation>空の潜在画像</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Empty video latent</source>
        <translation>空の動画潜在</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>File name prefix</source>
        <translation>ファイル名の接頭辞</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Flux guidance</source>
        <translation>FLUX ガイダンス</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Format</source>
        <translation>形式</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Frame rate</source>
        <translation>フレームレート</translation>
    </message>
    <message>
        <location line="+1"/>
        <location filename="../app/workflows/template_workflow.cpp" line="+8"/>
        <source>Frames</source>
        <translation>フレーム数</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Image</source>
        <translation>画像</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Images</source>
        <translation>画像</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Job&apos;s mask</source>
        <translation>ジョブのマスク</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Job&apos;s picture</source>
        <translation>ジョブの画像</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Latent</source>
        <translation>潜在画像</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>LoRA</source>
        <translation>LoRA</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Load LoRA</source>
        <translation>LoRA を読み込む</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Load LoRA (model only)</source>
        <translation>LoRA を読み込む（モデルのみ）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Load VAE</source>
        <translation>VAE を読み込む</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Load checkpoint</source>
        <translation>チェックポイントを読み込む</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Load image</source>
        <translation>画像を読み込む</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Load mask</source>
        <translation>マスクを読み込む</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Load video model</source>
        <translation>動画モデルを読み込む</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Mask</source>
        <translation>マスク</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Mask feather</source>
        <translation>マスクのぼかし</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Max shift</source>
        <translation>最大シフト</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Mode</source>
        <translation>モード</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Model sampling (FLUX)</source>
        <translation>モデルサンプリング（FLUX）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Model strength</source>
        <translation>モデルの強さ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Negative</source>
        <translation>ネガティブ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Original height</source>
        <translation>元の高さ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Original width</source>
        <translation>元の幅</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Path</source>
        <translation>パス</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Positive</source>
        <translation>ポジティブ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Prediction</source>
        <translation>予測</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Preview image</source>
        <translation>画像のプレビュー</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Quality</source>
        <translation>品質</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Save image</source>
        <translation>画像を保存</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Save image as</source>
        <translation>名前を付けて画像を保存</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Save video</source>
        <translation>動画を保存</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Save video as</source>
        <translation>名前を付けて動画を保存</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Schedule</source>
        <translation>スケジュール</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Second text encoder</source>
        <translation>第 2 テキストエンコーダー</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Shift</source>
        <translation>シフト</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Strength schedule</source>
        <translation>強度の推移</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>T5 text</source>
        <translation>T5 テキスト</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Text</source>
        <translation>テキスト</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Text encode</source>
        <translation>テキストのエンコード</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Text encode (FLUX)</source>
        <translation>テキストエンコード（FLUX）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Text encoder</source>
        <translation>テキストエンコーダー</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Text encoder strength</source>
        <translation>テキストエンコーダーの強さ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Tile overlap</source>
        <translation>タイルの重なり</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Tile size</source>
        <translation>タイルのサイズ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Tiling</source>
        <translation>タイル分割</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>VAE</source>
        <translation>VAE</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>VAE decode</source>
        <translation>VAE デコード</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>VAE encode</source>
        <translation>VAE エンコード</translation>
    </message>
    <message>
        <location line="+1"/>
        <location filename="../app/workflows/template_workflow.cpp" line="-4"/>
        <source>Width</source>
        <translation>幅</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Zero terminal SNR</source>
        <translation>終端 SNR ゼロ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>conditioning</source>
        <translation>コンディショニング</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>image</source>
        <translation>画像</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>latent</source>
        <translation>潜在画像</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>loaders</source>
        <translation>読み込み</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>sampling</source>
        <translation>サンプリング</translation>
    </message>
    <message>
        <location line="-58"/>
        <location filename="../app/workflows/template_workflow.cpp" line="+2"/>
        <source>Height</source>
        <translation>高さ</translation>
    </message>
</context>
<context>
    <name>kiln::app::WorkflowDocument</name>
    <message>
        <location filename="../app/editor/workflow_document.cpp" line="+62"/>
        <source>%1 takes a whole number</source>
        <translation>%1 には整数を指定します</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>%1 takes a number</source>
        <translation>%1 には数値を指定します</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 takes a finite number</source>
        <translation>%1 には有限の数値を指定します</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 is on or off</source>
        <translation>%1 はオンかオフです</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 is one of the listed choices</source>
        <translation>%1 は一覧の選択肢のいずれかです</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>%1 takes text</source>
        <translation>%1 にはテキストを指定します</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 must be between %2 and %3</source>
        <translation>%1 は %2 から %3 の間でなければなりません</translation>
    </message>
    <message>
        <location line="+66"/>
        <location line="+234"/>
        <source>Kiln has no node type %1</source>
        <translation>Kiln にノード種別 %1 はありません</translation>
    </message>
    <message>
        <location line="-223"/>
        <source>Add %1</source>
        <translation>%1 を追加</translation>
    </message>
    <message>
        <location line="+10"/>
        <location line="+25"/>
        <source>None of those nodes is in the workflow</source>
        <translation>それらのノードはワークフローにありません</translation>
    </message>
    <message>
        <location line="-14"/>
        <source>Delete node</source>
        <translation>ノードを削除</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Delete %1 nodes</source>
        <translation>%1 個のノードを削除</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Move</source>
        <translation>移動</translation>
    </message>
    <message>
        <location line="+6"/>
        <location line="+15"/>
        <source>There is no node %1</source>
        <translation>ノード %1 はありません</translation>
    </message>
    <message>
        <location line="-11"/>
        <source>%1 has no parameter %2</source>
        <translation>%1 にパラメータ %2 はありません</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Set %1</source>
        <translation>%1 を設定</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Rename node</source>
        <translation>ノード名を変更</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Select the nodes to group first</source>
        <translation>まずグループにするノードを選択してください</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Group</source>
        <translation>グループ</translation>
    </message>
    <message>
        <location line="+6"/>
        <location line="+8"/>
        <location line="+8"/>
        <source>There is no such group</source>
        <translation>そのグループはありません</translation>
    </message>
    <message>
        <location line="-13"/>
        <source>Ungroup</source>
        <translation>グループを解除</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Rename group</source>
        <translation>グループ名の変更</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>%1 is not a colour of the form #rrggbb</source>
        <translation>%1 は #rrggbb 形式の色ではありません</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Colour group</source>
        <translation>グループの色を変更</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Both ends must be nodes of the workflow</source>
        <translation>両端ともワークフローのノードでなければなりません</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>A node cannot feed itself</source>
        <translation>ノードは自分自身に接続できません</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>%1 has no output %2</source>
        <translation>%1 に出力 %2 はありません</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 has no input %2</source>
        <translation>%1 に入力 %2 はありません</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>The output gives %1 and the input takes %2</source>
        <translation>出力は %1、入力は %2 を受け取ります</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>That link would make a cycle</source>
        <translation>その接続は循環になります</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Connect</source>
        <translation>接続</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Nothing is connected there</source>
        <translation>そこには何も接続されていません</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Disconnect</source>
        <translation>切断</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>There is no parameter %1 on node %2</source>
        <translation>ノード %2 にパラメータ %1 はありません</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>That parameter is not shown in the generate panel</source>
        <translation>そのパラメータは生成パネルに表示されていません</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Show in the generate panel</source>
        <translation>生成パネルに表示</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Hide from the generate panel</source>
        <translation>生成パネルから隠す</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>The clipboard holds no Kiln nodes: %1</source>
        <translation>クリップボードに Kiln のノードはありません：%1</translation>
    </message>
    <message>
        <location line="+31"/>
        <source>The clipboard holds no nodes</source>
        <translation>クリップボードにノードはありません</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Paste</source>
        <translation>貼り付け</translation>
    </message>
    <message>
        <location line="+29"/>
        <source>Cannot write %1: %2</source>
        <translation>%1 に書き込めません：%2</translation>
    </message>
</context>
<context>
    <name>kiln::ui::DoubleField</name>
    <message>
        <location filename="../ui/number_fields.cpp" line="+101"/>
        <source>%1 is above the most, %2</source>
        <translation>%1 は上限 %2 を超えています</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 is below the least, %2</source>
        <translation>%1 は下限 %2 を下回っています</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1: set to %2</source>
        <translation>%1: %2 にしました</translation>
    </message>
</context>
<context>
    <name>kiln::ui::EngineTexts</name>
    <message>
        <location filename="../ui/engine_texts.cpp" line="+21"/>
        <source>Encoding prompt</source>
        <translation>プロンプトをエンコード中</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Encoding image</source>
        <translation>画像をエンコード中</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Encoding video</source>
        <translation>動画をエンコード中</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Loading model</source>
        <translation>モデルを読み込み中</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Loading VAE</source>
        <translation>VAE を読み込み中</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Denoising</source>
        <translation>ノイズ除去中</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Decoding</source>
        <translation>デコード中</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Saving</source>
        <translation>保存中</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>steps</source>
        <translation>ステップ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>tile passes</source>
        <translation>タイル処理</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>files</source>
        <translation>ファイル</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>tensors</source>
        <translation>テンソル</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>prompts</source>
        <translation>プロンプト</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>frames</source>
        <translation>フレーム</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>encoders</source>
        <translation>エンコーダー</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>streams</source>
        <translation>ストリームあり</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>no streams</source>
        <translation>ストリームなし</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>back to the host after each call</source>
        <translation>呼び出しごとにホストへ戻す</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>pinned</source>
        <translation>ピン留め</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>pinned per group</source>
        <translation>グループごとにピン留め</translation>
    </message>
    <message>
        <location line="+18"/>
        <source> image %1 of %2</source>
        <translation> 画像 %1/%2</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>%1 block(s) per group</source>
        <translation>グループごとに %1 ブロック</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 resident</source>
        <translation>%1 を常駐</translation>
    </message>
</context>
<context>
    <name>kiln::ui::FirstStartWizard</name>
    <message>
        <location filename="../ui/first_start_wizard.cpp" line="+27"/>
        <source>memory unknown</source>
        <translation>メモリ不明</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Welcome to Kiln</source>
        <translation>Kiln へようこそ</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Skip</source>
        <translation>スキップ</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Your models</source>
        <translation>モデル</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>No A1111, ComfyUI or InvokeAI model folders were found. Kiln&apos;s starter model is ready to use; add folders of your own checkpoints here or later in Preferences.</source>
        <translation>A1111、ComfyUI、InvokeAI のモデルフォルダーは見つかりませんでした。Kiln のスターターモデルはすぐに使えます。自分のチェックポイントのフォルダーはここか、後で設定から追加できます。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Kiln found the model folders of these programs. Checked folders are searched for checkpoints, LoRAs and VAEs; the files stay where they are.</source>
        <translation>Kiln はこれらのプログラムのモデルフォルダーを見つけました。チェックしたフォルダーからチェックポイント、LoRA、VAE を探します。ファイルは移動しません。</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>%1: %2 (1 checkpoint)</source>
        <translation>%1: %2（チェックポイント 1 個）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1: %2 (%3 checkpoints)</source>
        <translation>%1: %2（チェックポイント %3 個）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Add folder...</source>
        <translation>フォルダーを追加...</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Memory</source>
        <translation>メモリ</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>%1 (proposed)</source>
        <translation>%1（推奨）</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Every one of these settings can be changed later in Preferences.</source>
        <translation>これらの設定はすべて後で設定から変更できます。</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>%1: %2 (%3)</source>
        <translation>%1: %2 (%3)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>cpu: the processor (slow; for machines without a usable GPU)</source>
        <translation>cpu: プロセッサ（低速。使える GPU のないマシン向け）</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Compute on</source>
        <translation>計算に使うデバイス</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>No GPU was found: Kiln computes on the CPU.</source>
        <translation>GPU が見つかりません。Kiln は CPU で計算します。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 (%2)</source>
        <translation>%1（%2）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Found: %1.</source>
        <translation>検出: %1。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>This build of Kiln computes on the CPU only, so the CPU preset is proposed.</source>
        <translation>このビルドの Kiln は CPU でのみ計算するため、CPU プリセットを推奨します。</translation>
    </message>
    <message>
        <location line="+40"/>
        <source>Model folder</source>
        <translation>モデルフォルダー</translation>
    </message>
</context>
<context>
    <name>kiln::ui::GalleryPanel</name>
    <message>
        <location filename="../ui/gallery_panel.cpp" line="+63"/>
        <source>Show</source>
        <translation>表示</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Show the selected result in the viewer</source>
        <translation>選択した結果をビューアに表示</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Reuse settings</source>
        <translation>設定を再利用</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Fill the generate panel with the selected result&apos;s prompt and settings</source>
        <translation>選択した結果のプロンプトと設定を生成パネルに入れる</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Refresh</source>
        <translation>更新</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Read the output folder again</source>
        <translation>出力フォルダを読み直す</translation>
    </message>
    <message>
        <location line="+46"/>
        <source>seed %1</source>
        <translation>シード %1</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>%1
seed %2</source>
        <translation>%1
シード %2</translation>
    </message>
</context>
<context>
    <name>kiln::ui::IntField</name>
    <message>
        <location filename="../ui/number_fields.cpp" line="-35"/>
        <source>%1 is above the most, %2</source>
        <translation>%1 は上限 %2 を超えています</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 is below the least, %2</source>
        <translation>%1 は下限 %2 を下回っています</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 is not a multiple of %2</source>
        <translation>%1 は %2 の倍数ではありません</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1: set to %2</source>
        <translation>%1: %2 にしました</translation>
    </message>
</context>
<context>
    <name>kiln::ui::MainWindow</name>
    <message>
        <location filename="../ui/main_window.cpp" line="+354"/>
        <source>Kiln</source>
        <translation>Kiln</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Generate</source>
        <translation>生成</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Save As…</source>
        <translation>名前を付けて保存…</translation>
    </message>
    <message>
        <location line="-3"/>
        <source>Interrupt the render (Esc)</source>
        <translation>生成を中断する（Esc）</translation>
    </message>
    <message>
        <location line="-199"/>
        <source>Idle</source>
        <translation>待機中</translation>
    </message>
    <message>
        <location line="-2"/>
        <source>Memory settings ignored: %1</source>
        <translation>メモリ設定を無視しました：%1</translation>
    </message>
    <message>
        <location line="+131"/>
        <source>&amp;Edit</source>
        <translation>編集(&amp;E)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Preferences…</source>
        <translation>設定(&amp;P)…</translation>
    </message>
    <message>
        <location line="-84"/>
        <source>Starting…</source>
        <translation>開始中…</translation>
    </message>
    <message>
        <location line="-126"/>
        <source>Computing on the CPU: %1</source>
        <translation>CPU で計算します：%1</translation>
    </message>
    <message>
        <location line="+95"/>
        <source>The last session&apos;s settings cannot be restored: %1</source>
        <translation>前回のセッションの設定を復元できません: %1</translation>
    </message>
    <message numerus="yes">
        <location line="+15"/>
        <source>Skipped: this image finishes, %n later image(s) dropped</source>
        <translation>
            <numerusform>スキップ: この画像は最後まで描き、残り %n 枚は取りやめます</numerusform>
        </translation>
    </message>
    <message>
        <location line="+78"/>
        <source>This file is not a workflow: it is not JSON and carries no workflow in its metadata</source>
        <translation>このファイルはワークフローではありません: JSON ではなく、メタデータにもワークフローがありません</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>&amp;File</source>
        <translation>ファイル(&amp;F)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Default &amp;Video Workflow</source>
        <translation>標準動画ワークフロー(&amp;V)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Save Image As…</source>
        <translation>画像に名前を付けて保存(&amp;S)…</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&amp;Quit</source>
        <translation>終了(&amp;Q)</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>&amp;View</source>
        <translation>表示(&amp;V)</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Zoom &amp;In</source>
        <translation>拡大(&amp;I)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Zoom &amp;Out</source>
        <translation>縮小(&amp;O)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Fit to Window</source>
        <translation>ウィンドウに合わせる(&amp;F)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Actual Pixels</source>
        <translation>実寸表示(&amp;A)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Smooth Scaling</source>
        <translation>なめらかな拡大縮小(&amp;S)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Interpolate enlarged pictures instead of showing their pixels as blocks</source>
        <translation>拡大した画像のピクセルをブロックで表示せず、補間して表示します</translation>
    </message>
    <message>
        <location line="+36"/>
        <source>Batch count</source>
        <translation>枚数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Images rendered one after another, seed, seed + 1, …</source>
        <translation>順に描く枚数（シード、シード + 1、…）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>text to video (built in)</source>
        <translation>テキストから動画（内蔵）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>FLUX.1 text to image (built in)</source>
        <translation>FLUX.1 テキストから画像（内蔵）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Render with these settings (Ctrl+Enter); while a render runs, queue another</source>
        <translation>この設定で生成（Ctrl+Enter）。実行中なら次をキューに追加</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Interrupt</source>
        <translation>中断</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Skip</source>
        <translation>スキップ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Finish the current image and drop the rest of its batch</source>
        <translation>現在の画像を仕上げ、残りのバッチを取りやめる</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Queue</source>
        <translation>キュー</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Gallery</source>
        <translation>ギャラリー</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Log</source>
        <translation>ログ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Memory</source>
        <translation>メモリ</translation>
    </message>
    <message>
        <location line="+64"/>
        <location line="+111"/>
        <source>Default workflow</source>
        <translation>標準のワークフロー</translation>
    </message>
    <message>
        <location line="-107"/>
        <source>The starter model is missing. Choose a model.</source>
        <translation>スターターモデルがありません。モデルを選んでください。</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Video workflow: choose a video model (Wan 2.1)</source>
        <translation>動画ワークフロー：動画モデル（Wan 2.1）を選んでください</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>%1 cannot run</source>
        <translation>%1 は実行できません</translation>
    </message>
    <message>
        <location line="+8"/>
        <location line="+3"/>
        <location line="+4"/>
        <source>Cannot open %1</source>
        <translation>%1 を開けません</translation>
    </message>
    <message>
        <location line="-3"/>
        <source>there is not enough memory to read it</source>
        <translation>読み込むためのメモリが足りません</translation>
    </message>
    <message>
        <location line="+75"/>
        <source>FLUX.1 workflow</source>
        <translation>FLUX.1 ワークフロー</translation>
    </message>
    <message>
        <location line="+50"/>
        <source>Save image</source>
        <translation>画像を保存</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>PNG images (*.png)</source>
        <translation>PNG 画像 (*.png)</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Cannot show %1</source>
        <translation>%1 を表示できません</translation>
    </message>
    <message>
        <location line="+88"/>
        <source>%1 %2</source>
        <translation>%1 %2</translation>
    </message>
    <message>
        <location line="+31"/>
        <source>Failed</source>
        <translation>失敗</translation>
    </message>
    <message>
        <location line="-231"/>
        <location line="+105"/>
        <source>Saving failed</source>
        <translation>保存に失敗しました</translation>
    </message>
    <message>
        <location line="-316"/>
        <source>&amp;Open Workflow…</source>
        <translation>ワークフローを開く(&amp;O)…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Save &amp;Workflow As…</source>
        <translation>ワークフローに名前を付けて保存(&amp;W)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Default Workflow</source>
        <translation>標準ワークフロー(&amp;D)</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>&amp;Workflow Editor</source>
        <translation>ワークフローエディタ(&amp;W)</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>&amp;Help</source>
        <translation>ヘルプ(&amp;H)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;First-Start Assistant…</source>
        <translation>初回セットアップ(&amp;F)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;About Kiln</source>
        <translation>Kiln について(&amp;A)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>About Kiln</source>
        <translation>Kiln について</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>&lt;p&gt;&lt;b&gt;Kiln %1&lt;/b&gt;&lt;/p&gt;&lt;p&gt;Local image and video generation with diffusion models.&lt;/p&gt;</source>
        <translation>&lt;p&gt;&lt;b&gt;Kiln %1&lt;/b&gt;&lt;/p&gt;&lt;p&gt;拡散モデルによるローカルな画像・動画生成。&lt;/p&gt;</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>The device changes to %1 when Kiln starts again</source>
        <translation>次回の Kiln 起動時にデバイスが %1 に切り替わります</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Workflow: %1</source>
        <translation>ワークフロー：%1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>text to image (built in)</source>
        <translation>テキストから画像（内蔵）</translation>
    </message>
    <message>
        <location line="-88"/>
        <location line="+8"/>
        <location line="+179"/>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Opened %1</source>
        <translation>%1 を開きました</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>Open workflow</source>
        <translation>ワークフローを開く</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Workflows and pictures (*.json *.png)</source>
        <translation>ワークフローと画像 (*.json *.png)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Save workflow</source>
        <translation>ワークフローを保存</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Kiln workflows (*.json)</source>
        <translation>Kiln ワークフロー (*.json)</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Cannot write %1: %2</source>
        <translation>%1 に書き込めません：%2</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>workflow editor</source>
        <translation>ワークフローエディタ</translation>
    </message>
    <message>
        <location line="+122"/>
        <source>Workflow of %1 reopened</source>
        <translation>%1 のワークフローを開き直しました</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>The workflow in %1 cannot be read (%2); using its recorded settings</source>
        <translation>%1 のワークフローを読めません（%2）。記録された設定を使います</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>%1 records no settings to reuse</source>
        <translation>%1 には再利用できる設定がありません</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>Settings of %1 reused</source>
        <translation>%1 の設定を再利用しました</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>No translation for &apos;%1&apos;: the interface stays in English</source>
        <translation>&apos;%1&apos; の翻訳はありません。表示は英語のままです</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Image %1 of %2 · %3</source>
        <translation>画像 %1/%2 · %3</translation>
    </message>
    <message>
        <location line="+1"/>
        <source> · %1%</source>
        <translation> · %1%</translation>
    </message>
    <message>
        <location line="+3"/>
        <source> · estimating the time left</source>
        <translation> · 残り時間を見積もり中</translation>
    </message>
    <message>
        <location line="+2"/>
        <source> · about %1 s left</source>
        <translation> · 残り約 %1 秒</translation>
    </message>
    <message>
        <location line="+2"/>
        <source> · %1 waiting</source>
        <translation> · 待機 %1 件</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Done</source>
        <translation>完了</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Done. Note: %1</source>
        <translation>完了。注意：%1</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Stopped</source>
        <translation>停止しました</translation>
    </message>
</context>
<context>
    <name>kiln::ui::MemoryBar</name>
    <message>
        <location filename="../ui/memory_map.cpp" line="+51"/>
        <source>Left: %1 of %2</source>
        <translation>空き: %2 のうち %1</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>none</source>
        <translation>なし</translation>
    </message>
</context>
<context>
    <name>kiln::ui::MemoryMapView</name>
    <message>
        <location line="+116"/>
        <source>Working memory for</source>
        <translation>作業メモリの対象サイズ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>frames</source>
        <translation>フレーム</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>native</source>
        <translation>ネイティブ</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>The picture size the working memory is for; native: each model&apos;s own</source>
        <translation>作業メモリを見積もる画像サイズ。ネイティブ: 各モデル本来のサイズ</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>A video model&apos;s clip length; native: the model&apos;s own</source>
        <translation>動画モデルのクリップ長。ネイティブ: モデル本来の長さ</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>No map for these settings: %1</source>
        <translation>この設定ではマップを表示できません: %1</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>The engine has not said yet what its device holds.</source>
        <translation>エンジンはまだデバイスの内容を報告していません。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Kiln computes on the CPU (%1): the weights stay in host memory, so there is nothing to place.</source>
        <translation>Kiln は CPU (%1) で計算します。重みはホストメモリに置かれたままなので、配置するものはありません。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>The engine is moving weights on %1 just now; the map follows in a moment.</source>
        <translation>エンジンが %1 上で重みを移動中です。まもなくマップを表示します。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>No model is loaded on %1. The map shows each model here once a render has loaded it.</source>
        <translation>%1 にモデルは読み込まれていません。生成でモデルが読み込まれると、ここに表示されます。</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>%1 × %2, %3 frames</source>
        <translation>%1 × %2、%3 フレーム</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 × %2</source>
        <translation>%1 × %2</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 at %2</source>
        <translation>%1（%2）</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Resident weights</source>
        <translation>常駐する重み</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Largest streamed group</source>
        <translation>最大の転送グループ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Working memory</source>
        <translation>作業メモリ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Working reserve</source>
        <translation>作業用予約</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>%1 (%2)</source>
        <translation>%1 (%2)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1: %2 resident weights, %3 largest streamed group, %4 working memory, %5 working reserve</source>
        <translation>%1: 常駐する重み %2、最大の転送グループ %3、作業メモリ %4、作業用予約 %5</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1; %2 left of %3</source>
        <translation>%1。%3 のうち %2 の空き</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1; %2 too little: Kiln may use %3</source>
        <translation>%1。%2 不足: Kiln が使えるのは %3</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Pinned</source>
        <translation>ピン留め</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Host memory: %1 of weights, %2 of them pinned (the settings allow %3 pinned)</source>
        <translation>ホストメモリ: 重み %1、うちピン留め %2（設定で許可されたピン留め: %3）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Host memory: %1 of weights (this device has no pinned memory)</source>
        <translation>ホストメモリ: 重み %1（このデバイスにはピン留めメモリがありません）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 (%2, %3): %4</source>
        <translation>%1 (%2, %3): %4</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 resident</source>
        <translation>%1 常駐</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>up to %1 streamed</source>
        <translation>最大 %1 を転送</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 pinned</source>
        <translation>%1 ピン留め</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Does not fit: %1</source>
        <translation>収まりません: %1</translation>
    </message>
</context>
<context>
    <name>kiln::ui::MemoryPanel</name>
    <message>
        <location filename="../ui/memory_panel.cpp" line="+40"/>
        <source>What</source>
        <translation>項目</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Memory</source>
        <translation>メモリ</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Device</source>
        <translation>デバイス</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>not known yet</source>
        <translation>まだ不明</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Device memory in use</source>
        <translation>使用中のデバイスメモリ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 of %2 (peak %3)</source>
        <translation>%1 / %2（ピーク %3）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Reserved by the allocator</source>
        <translation>アロケータが予約</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 (%2 of it cached for reuse)</source>
        <translation>%1（うち %2 は再利用のためキャッシュ）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Pinned host memory</source>
        <translation>ピン留めホストメモリ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 (peak %2)</source>
        <translation>%1（ピーク %2）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Loaded models: %1</source>
        <translation>読み込み済みモデル：%1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1, %2 on the device</source>
        <translation>%1（うちデバイス上 %2）</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Running job</source>
        <translation>実行中のジョブ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Cached node results</source>
        <translation>キャッシュ済みノード結果</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 in %2 entries</source>
        <translation>%1（%2 件）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Kiln&apos;s resident memory</source>
        <translation>Kiln の常駐メモリ</translation>
    </message>
</context>
<context>
    <name>kiln::ui::NodeCanvas</name>
    <message>
        <location filename="../ui/node_canvas.cpp" line="+72"/>
        <source>on</source>
        <translation>オン</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>off</source>
        <translation>オフ</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>starter model</source>
        <translation>スターターモデル</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>none</source>
        <translation>なし</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>(required)</source>
        <translation>（必須）</translation>
    </message>
    <message>
        <location line="+261"/>
        <location line="+58"/>
        <source>Group</source>
        <translation>グループ</translation>
    </message>
    <message>
        <location line="+323"/>
        <source>Rename Group…</source>
        <translation>グループ名を変更…</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+8"/>
        <source>Group Colour</source>
        <translation>グループの色</translation>
    </message>
    <message>
        <location line="-6"/>
        <source>Theme</source>
        <translation>テーマ</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Red</source>
        <translation>赤</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Orange</source>
        <translation>オレンジ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Green</source>
        <translation>緑</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Blue</source>
        <translation>青</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Purple</source>
        <translation>紫</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Other…</source>
        <translation>その他…</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Ungroup</source>
        <translation>グループを解除</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Group Selection</source>
        <translation>選択をグループ化</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Ctrl+G</source>
        <translation>Ctrl+G</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Search…</source>
        <translation>検索…</translation>
    </message>
</context>
<context>
    <name>kiln::ui::NodeSearch</name>
    <message>
        <location filename="../ui/node_search.cpp" line="+19"/>
        <source>Search nodes</source>
        <translation>ノードを検索</translation>
    </message>
    <message>
        <location line="+39"/>
        <source>%1  (%2)</source>
        <translation>%1  (%2)</translation>
    </message>
</context>
<context>
    <name>kiln::ui::ParameterPanel</name>
    <message>
        <location filename="../ui/parameter_panel.cpp" line="+79"/>
        <location line="+37"/>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <location line="-12"/>
        <location line="+194"/>
        <source>Kiln starter model</source>
        <translation>Kiln スターターモデル</translation>
    </message>
    <message>
        <location line="-183"/>
        <source>%1 (not a checkpoint)</source>
        <translation>%1 (チェックポイントではありません)</translation>
    </message>
    <message>
        <location line="+85"/>
        <location line="+61"/>
        <location line="+40"/>
        <source>Browse…</source>
        <translation>参照…</translation>
    </message>
    <message>
        <location line="-97"/>
        <source>Open checkpoint</source>
        <translation>チェックポイントを開く</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Checkpoints (*.safetensors)</source>
        <translation>チェックポイント (*.safetensors)</translation>
    </message>
    <message>
        <location line="+60"/>
        <source>Choose a file</source>
        <translation>ファイルを選ぶ</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>From %1 to %2</source>
        <translation>%1 から %2 まで</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>What to avoid</source>
        <translation>避けたいもの</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>What to render</source>
        <translation>描きたいもの</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Random</source>
        <translation>ランダム</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>A new seed for every Generate; untick to keep the seed</source>
        <translation>生成のたびに新しいシード。チェックを外すとシードを固定します</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>A .safetensors checkpoint or a diffusers folder</source>
        <translation>.safetensors チェックポイントまたは diffusers フォルダ</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>This workflow exposes no parameters: Generate runs it as it is.</source>
        <translation>このワークフローは公開パラメータを持ちません。生成するとそのまま実行されます。</translation>
    </message>
</context>
<context>
    <name>kiln::ui::PreferencesDialog</name>
    <message>
        <location filename="../ui/preferences_dialog.cpp" line="+128"/>
        <source>Preferences</source>
        <translation>設定</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>General</source>
        <translation>一般</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Memory</source>
        <translation>メモリ</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>LoRA</source>
        <translation>LoRA</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Appearance</source>
        <translation>外観</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Preset</source>
        <translation>プリセット</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Memory map: what these settings put where, before Apply</source>
        <translation>メモリマップ: 適用前に、この設定で何がどこに置かれるか</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Fill in</source>
        <translation>入力</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Sets the memory settings below to the preset&apos;s; Apply or OK stores them</source>
        <translation>下のメモリ設定をプリセットの値にします。適用または OK で保存されます</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Custom (your own values)</source>
        <translation>カスタム (独自の値)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The values below match no preset</source>
        <translation>下の値はどのプリセットにも一致しません</translation>
    </message>
    <message>
        <location line="+31"/>
        <source>This build of Kiln has no GPU support (its libtorch is CPU-only): cpu, or sim:SIZE to simulate a device</source>
        <translation>この Kiln のビルドは GPU に対応していません（libtorch が CPU 専用です）：cpu、またはデバイスを模擬する sim:サイズ</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>GPUs this build can use: %1</source>
        <translation>このビルドで使える GPU：%1</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Takes effect when Kiln starts again (now: %1)</source>
        <translation>Kiln の次回起動時に反映されます (現在: %1)</translation>
    </message>
    <message>
        <location line="+139"/>
        <source>Record stream needs streams: turn on streams or turn off record stream</source>
        <translation>レコードストリームにはストリームが必要です：ストリームをオンにするか、レコードストリームをオフにしてください</translation>
    </message>
</context>
<context>
    <name>kiln::ui::QueuePanel</name>
    <message>
        <location filename="../ui/queue_panel.cpp" line="+38"/>
        <source>Cancel</source>
        <translation>取り消し</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Remove the selected request, or stop it if it is running</source>
        <translation>選択した依頼を削除（実行中なら中断）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Cancel all</source>
        <translation>すべて取り消し</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stop the running request and remove every waiting one</source>
        <translation>実行中の依頼を中断し、待機中をすべて削除</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Up</source>
        <translation>上へ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Run the selected request sooner</source>
        <translation>選択した依頼を先に実行</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Down</source>
        <translation>下へ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Run the selected request later</source>
        <translation>選択した依頼を後で実行</translation>
    </message>
    <message>
        <location line="+33"/>
        <source>Running: %1</source>
        <translation>実行中：%1</translation>
    </message>
</context>
<context>
    <name>kiln::ui::SeedField</name>
    <message>
        <location filename="../ui/number_fields.cpp" line="+88"/>
        <source>%1: set to %2</source>
        <translation>%1: %2 にしました</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>%1 is above the most, %2</source>
        <translation>%1 は上限 %2 を超えています</translation>
    </message>
</context>
<context>
    <name>kiln::ui::StageProgressBar</name>
    <message>
        <location filename="../ui/stage_progress_bar.cpp" line="+19"/>
        <source>Progress</source>
        <translation>進行状況</translation>
    </message>
    <message>
        <location line="+74"/>
        <source>%1 %2</source>
        <translation>%1 %2</translation>
    </message>
</context>
<context>
    <name>kiln::ui::WorkflowEditor</name>
    <message>
        <location filename="../ui/workflow_editor.cpp" line="+92"/>
        <source>Done</source>
        <translation>完了</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Failed: %1</source>
        <translation>失敗：%1</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Stopped</source>
        <translation>停止しました</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>%1 %2 · %3%</source>
        <translation>%1 %2 · %3%</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>&amp;File</source>
        <translation>ファイル(&amp;F)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;New</source>
        <translation>新規(&amp;N)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>&amp;Open…</source>
        <translation>開く(&amp;O)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Open workflow</source>
        <translation>ワークフローを開く</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Workflows and pictures (*.json *.png)</source>
        <translation>ワークフローと画像 (*.json *.png)</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&amp;Save</source>
        <translation>保存(&amp;S)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Save &amp;As…</source>
        <translation>名前を付けて保存(&amp;A)…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Use in &amp;Generate Panel</source>
        <translation>生成パネルで使う(&amp;G)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Edit</source>
        <translation>編集(&amp;E)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Undo</source>
        <translation>元に戻す(&amp;U)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Redo</source>
        <translation>やり直し(&amp;R)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>&amp;Copy</source>
        <translation>コピー(&amp;C)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Paste</source>
        <translation>貼り付け(&amp;P)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Delete</source>
        <translation>削除(&amp;D)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Group Selection</source>
        <translation>選択をグループ化(&amp;G)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>U&amp;ngroup</source>
        <translation>グループを解除(&amp;N)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;View</source>
        <translation>表示(&amp;V)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Frame All</source>
        <translation>全体を表示(&amp;F)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Workflow</source>
        <translation>ワークフロー(&amp;W)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Run</source>
        <translation>実行(&amp;R)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Interrupt</source>
        <translation>中断(&amp;I)</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>Untitled workflow</source>
        <translation>無題のワークフロー</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1%2 — Kiln workflow editor</source>
        <translation>%1%2 — Kiln ワークフローエディタ</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>Select a node to edit its parameters.</source>
        <translation>ノードを選ぶとパラメータを編集できます。</translation>
    </message>
    <message numerus="yes">
        <location line="+1"/>
        <source>%n nodes selected</source>
        <translation>
            <numerusform>%n 個のノードを選択</numerusform>
        </translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Show %1 in the generate panel</source>
        <translation>%1 を生成パネルに表示</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>Cannot open %1: %2</source>
        <translation>%1 を開けません：%2</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Opened %1</source>
        <translation>%1 を開きました</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Save workflow</source>
        <translation>ワークフローを保存</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Kiln workflows (*.json)</source>
        <translation>Kiln ワークフロー (*.json)</translation>
    </message>
    <message>
        <location line="+3"/>
        <location line="+10"/>
        <source>Saving failed</source>
        <translation>保存に失敗しました</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>The workflow cannot run: %1</source>
        <translation>ワークフローを実行できません：%1</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Queued</source>
        <translation>待機中</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>Unsaved changes</source>
        <translation>未保存の変更</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Save the changes to this workflow?</source>
        <translation>このワークフローの変更を保存しますか？</translation>
    </message>
</context>
</TS>
